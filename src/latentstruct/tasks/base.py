"""The task interfaces: features, loss and constraints of one application.

A task turns raw records into model-ready instances and defines, for a weight vector
``w``, the part scores an inference routine maximises.  ``Task`` holds what every task
shares (parameters, reading, featurising, evaluation, persistence); what a task can do for
a learner is a *capability* (``tasks.contracts``), declared in its ``capabilities``:

* ``StructuredTask`` (max-decodable): ``argmax`` (plain and loss-augmented),
  ``joint_feature`` and ``loss`` of labelled structures;
* ``LatentBinaryTask`` (latent-binary): a binary decision over a hidden structure,
  ``latent_argmax`` and ``latent_feature``;

plus optional capabilities (heuristic, sized, random-ties, marginalizable, label-factored,
explainable).  Learners only ever talk to a task through these interfaces, so a learner
never knows which application it trains.

Tasks are configured like scikit-learn estimators: keyword parameters stored unchanged,
listed by ``get_params``.  A fitted task (its feature index and label set) is saved in
the model file as JSON-able parameters plus numpy arrays (``get_state``/``from_state``).
Once fitted, only the parameters a task lists in ``evaluation_params`` may change; the
others fed its featurisation, and changing them would silently change the model.
"""

from __future__ import annotations

import copy
import functools
import inspect
import warnings
import weakref
from dataclasses import dataclass
from typing import Any, ClassVar, Sequence

import numpy as np

from ..data.sparse import SparseRows, SparseVector
from ..registry import TASKS, get_task_class
from ..exceptions import ConfigError, check_is_fitted, is_fitted
from ..params import CheckedParams, validate_params
from ..inference.result import DecodeResult
from .contracts import (LATENT_BINARY, MAX_DECODABLE, Identity, latent_argmax_decisions,
                        loop_argmax_results, loop_joint_feature_differences, loop_loss_batch,
                        structure_members)
from .reports import binary_report
from .validation import check_binary_training_labels

__all__ = [
    "StructureView",
    "task_identity",
    "learner_defaults_for",
    "featurizer_param_defaults",
    "Dataset",
    "join_corpora",
    "Task",
    "OwnStructure",
    "set_counts",
    "set_choice",
    "frozen_fields",
    "OwnStructureTask",
    "ComposedTask",
    "ComposedBinaryTask",
    "MaxDecodableDefaults",
    "StructuredTask",
    "LatentBinaryDefaults",
    "BinaryDecisions",
    "LatentBinaryTask",
    "register_task",
    "get_task_class",
    "TASKS",
]


@dataclass(frozen=True)
class Dataset:
    """Records read from a file, with their gold structures (``None`` where unknown).

    ``binary`` optionally holds binary examples for learners with indirect supervision
    (J-LIS): records and +-1 labels.  ``labels`` optionally lists the label inventory when
    ``targets`` alone may not show every label (a small labelled sample).
    """

    records: Sequence[Any]
    targets: Sequence[Any]
    path: str | None = None
    binary: "Dataset | None" = None
    labels: tuple | None = None

    def __len__(self) -> int:
        return len(self.records)



def join_corpora(X, corpus_cls: type, concat):
    """``X`` as one featurised corpus of type ``corpus_cls``: a corpus as it is, a list of
    corpora joined by ``concat`` (the shared ``as_batch`` of the corpus-backed tasks)."""
    if isinstance(X, corpus_cls):
        return X
    parts = list(X)
    bad = [type(p).__name__ for p in parts if not isinstance(p, corpus_cls)]
    if bad:
        name = corpus_cls.__name__
        raise TypeError(f"expected featurised sentences (a {name} from task.featurize, or a "
                        f"list of them), got a list holding {bad[0]}")
    return concat(parts)


_VARIADIC = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)


def featurizer_param_defaults(task_cls) -> dict:
    """The parameters a task takes from its featurizer, with the task's defaults.

    A composed task's featurizer (``featurizer_class``, a scikit-learn transformer) declares
    its parameters once, in its signature and its ``_parameter_constraints``; the task
    takes them by the same names (``PosTask(window=1)``, ``--option window=1``), as
    scikit-learn's ``TfidfVectorizer`` takes its ``CountVectorizer``'s, without listing
    them again.  The defaults are the featurizer's, but where the task has its own
    (``featurizer_defaults``); the featurizer parameters the task sets itself
    (``featurizer_fixed``) are not the task's.  Empty for a task without a
    ``featurizer_class``."""
    featurizer = getattr(task_cls, "featurizer_class", None)
    if featurizer is None:
        return {}
    fixed, own = task_cls.featurizer_fixed, task_cls.featurizer_defaults
    sig = inspect.signature(featurizer.__init__)
    return {k: own.get(k, p.default) for k, p in sig.parameters.items()
            if k != "self" and p.kind not in _VARIADIC and k not in fixed}


class Task(CheckedParams):
    """What every task shares: parameters, data, evaluation and persistence.

    Subclasses set ``name`` and ``capabilities`` and implement ``read``, ``fit``,
    ``featurize``, ``evaluate``, ``write_predictions`` and the state round trip, plus the
    methods of their capabilities.
    """

    name: ClassVar[str] = ""
    #: capabilities this task offers (names from ``tasks.contracts``)
    capabilities: ClassVar[frozenset] = frozenset()
    #: parameters that may change after fit (they select evaluation data, not features)
    evaluation_params: ClassVar[frozenset] = frozenset()
    #: parameters that name places or code on the user's machine (paths, cache folders):
    #: a model file's values for them are never used (``tasks.contracts.params_from_file``)
    local_params: ClassVar[frozenset] = frozenset()
    #: learner used by ``latentstruct train`` when ``--learner`` is not given
    default_learner: ClassVar[str] = "ssvm"
    #: learner options whose good value depends on this task (the scale of its features),
    #: by learner name: ``{"ssvm": {"C": 0.001}}``.  ``latentstruct train``, ``latentstruct
    #: options`` and the estimators use them where the option is not given; a learner built
    #: directly (``StructuredSVM(task)``) keeps its own defaults.
    learner_defaults: ClassVar[dict[str, dict]] = {}
    #: whether ``read(None)`` loads data shipped with an installed package
    has_default_data: ClassVar[bool] = False
    pretrained_helpers: ClassVar[frozenset] = frozenset()  # pipelines.training attaches them
    #: the metric of ``evaluate`` that a learner's ``score`` returns (higher is better)
    score_metric: ClassVar[str] = "accuracy"
    #: how predictions in raw form are scored against the raw gold targets (``score``: the
    #: totals ``evaluate_raw`` gives; ``report``: their breakdown), such as
    #: ``tasks.reports.TagAccuracy``; None: the task scores encoded targets itself
    metric: ClassVar[Any] = None
    #: parameter -> list of what it may be (``latentstruct.params``: ``Interval``,
    #: ``Options``, ``bounded(limits.B)``, ...); checked on entering ``fit`` (once:
    #: ``params.fit_context`` wraps every subclass's ``fit``, and a subclass's fit calling
    #: ``super().fit()`` does not check again) and by ``check_compatible`` before any data
    #: is read.  A parameter not listed takes any value.
    _parameter_constraints: ClassVar[dict] = {}

    @classmethod
    def offered_capabilities(cls, params: dict | None = None) -> frozenset:
        """Capabilities a task of this class offers with ``params`` (default: its own)."""
        return frozenset(cls.capabilities)

    # --- scikit-learn style parameters -------------------------------------------------
    @classmethod
    def param_defaults(cls) -> dict:
        """Parameter name -> default value (its keys, in order, are the task's
        parameters): those its featurizer declares (a composed task's
        ``featurizer_class``; see :func:`featurizer_param_defaults`), then those of the
        signature of ``__init__``."""
        sig = inspect.signature(cls.__init__)
        own = {k: p.default for k, p in sig.parameters.items()
               if k not in ("self", "args", "kwargs") and p.kind not in _VARIADIC}
        return {**featurizer_param_defaults(cls), **own}

    def get_params(self, deep: bool = True) -> dict:
        return {k: getattr(self, k) for k in self.param_defaults()}

    @classmethod
    def validate_params(cls, params: dict) -> None:
        """Raise ``ConfigError`` (scikit-learn's wording) for the first value in ``params``
        that ``_parameter_constraints`` does not allow; needs no instance or data (this is
        what ``check_compatible`` runs)."""
        # the parameters a task takes from its featurizer are checked by the featurizer's
        # own declaration (where the task does not narrow one)
        featurizer = getattr(cls, "featurizer_class", None)
        declared = getattr(featurizer, "_parameter_constraints", {})
        constraints = {**{k: declared[k] for k in featurizer_param_defaults(cls) if k in declared},
                       **cls._parameter_constraints}
        validate_params(f"the {cls.name or cls.__name__!r} task", constraints, params,
                        defaults=cls.param_defaults())

    def check_params(self) -> None:
        """Raise ``ConfigError`` for a parameter value this task cannot use: each value
        against ``_parameter_constraints``, then ``_check_param_relations``.  ``fit`` runs
        it on entry; ``read``, ``make_dataset`` and the command line's evaluation-time
        options run it before they use the parameters (inside a fit that checked them on
        entry it does nothing: ``params.skip_parameter_validation``); loading runs it
        under ``skip_parameter_validation(False)``, always."""
        super().check_params()

    def _check_param_relations(self) -> None:
        """Raise ``ConfigError`` where two parameter values that are each valid cannot go
        together (each value alone is checked by ``_parameter_constraints`` first)."""

    def set_params(self, **params) -> "Task":
        valid = list(self.param_defaults())
        fitted = is_fitted(self)
        for key, value in params.items():
            if key not in valid:
                raise ConfigError(
                    f"unknown parameter {key!r} for task {self.name!r}; valid: {', '.join(valid)}"
                )
            if (fitted and key not in self.evaluation_params
                    and not same_value(getattr(self, key), value)):
                allowed = ", ".join(sorted(self.evaluation_params)) or "none"
                raise ConfigError(
                    f"cannot change {key!r} of a fitted {self.name!r} task: it fed the model's "
                    f"features or data at training time ({key}={getattr(self, key)!r}); retrain "
                    f"with the new value instead. Parameters that may change after training: "
                    f"{allowed}"
                )
            setattr(self, key, value)
        return self

    def __sklearn_clone__(self) -> "Task":
        """scikit-learn's ``clone`` of a task.

        A fitted task is part of the data representation: the examples ``X`` a learner is
        fitted on were featurised with its index, so a clone must keep that state (a
        refitted or unfitted copy would not match ``X``).  The clone is a shallow copy:
        the fitted state is never mutated after ``fit``, so sharing it is safe, while
        parameters set on the clone do not reach the original.  An unfitted task clones to
        a new unfitted task with the same parameters.
        """
        if is_fitted(self):
            return copy.copy(self)
        return type(self)(**self.get_params())

    def __repr__(self) -> str:
        defaults = self.param_defaults()
        changed = {k: v for k, v in self.get_params().items()
                   if not same_value(defaults.get(k, inspect.Parameter.empty), v)}
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in changed.items())})"

    # --- to be provided by subclasses ------------------------------------------------
    @property
    def n_features(self) -> int:
        raise NotImplementedError("each task defines n_features")

    def read(self, path, *, split: str = "train") -> Dataset:
        """Read labelled data; ``split`` ("train" or "test") lets tasks that sample their
        examples (negatives, deterministic subsets) draw the right portion."""
        raise NotImplementedError("each task defines read")

    def make_dataset(self, X, y=None) -> Dataset:
        """A :class:`Dataset` from plain Python objects: the in-memory twin of ``read``.

        ``X`` is a sequence of raw examples in the form the task's docstring gives (token
        lists, text pairs, texts, ...); ``y`` their targets in raw form (tag lists, labels),
        or None for unlabelled input (what ``predict`` takes).  The checks are those of the
        file reader (the reader parses its file and feeds the same validation), and a bad
        example is an ``InputError`` naming it as ``X[i]`` (or ``y[i]``), with the position
        inside it where that applies, what was expected and how to fix it.
        """
        raise ConfigError(
            f"task {self.name!r} ({type(self).__name__}) takes data from files only: it has no "
            f"make_dataset(X, y), so it cannot learn from Python lists. Read a file with "
            f"task.read(path), or give the task a make_dataset (docs/subclassing.md, 'In-memory "
            f"data')")

    def decode_predictions(self, predictions) -> list:
        """A learner's ``predict`` output (encoded, as ``encode_targets`` gives targets) in
        the raw form of :meth:`make_dataset`'s ``y``: tag strings, labels, heads."""
        return list(predictions)

    def fit(self, dataset: Dataset) -> "Task":
        raise NotImplementedError("each task defines fit")

    def featurize(self, dataset: Dataset):
        raise NotImplementedError("each task defines featurize")

    def evaluate(self, targets, predictions) -> dict:
        raise NotImplementedError("each task defines evaluate")

    def write_predictions(self, path, dataset: Dataset, predictions) -> None:
        raise NotImplementedError("each task defines write_predictions")

    def evaluate_model(self, dataset: Dataset, predict, decision_function=None) -> dict:
        """Metrics of a trained model on ``dataset``.

        ``predict(X)`` returns structures (or labels); ``decision_function(X)`` real scores.
        The default scores ``predict`` against the gold targets; ranking tasks override it
        and use ``decision_function``.  Tasks never see the learner itself.
        """
        X = self.featurize(dataset)
        return self.evaluate_raw(dataset.targets, predict(X))

    def evaluate_raw(self, targets, predictions) -> dict:
        """``evaluate``'s metrics of a learner's (encoded) predictions against raw gold
        ``targets`` (``make_dataset``'s ``y``, or what ``read`` gives).

        A task that composes a ``metric`` scores the raw labels with it, against
        ``decode_predictions``, so that a gold label the model never saw counts as what it
        is (``encode_targets`` refuses it); without one, the targets are encoded and
        ``evaluate`` scores them."""
        if self.metric is not None:
            return self.metric.score(list(targets), self.decode_predictions(predictions))
        return self.evaluate(self.encode_targets(targets), predictions)

    def report(self, dataset: Dataset, predictions) -> dict:
        """The breakdown behind ``evaluate``'s totals: counts and per-type scores of the
        encoded ``predictions`` against ``dataset``'s gold targets (see ``tasks.reports``):
        the ``metric``'s, or {} for a task without one.  ``latentstruct evaluate`` prints it
        next to them (``tasks.reports.evaluate_with_report``)."""
        if self.metric is None:
            return {}
        return self.metric.report(list(dataset.targets), self.decode_predictions(predictions))

    def encode_targets(self, targets) -> list:
        return list(targets)

    def training_targets(self, dataset: Dataset) -> list:
        """The encoded gold targets of a batch to train on (``encode_targets``), checked
        against what the fitted task decodes: every training path takes its targets here,
        a later ``partial_fit`` batch and ``train --resume``'s new data included.  A task
        whose decoder keeps constraints refuses a target outside them (the chunker)."""
        return self.encode_targets(dataset.targets)

    def get_state(self) -> tuple[dict, dict[str, np.ndarray]]:
        raise NotImplementedError("each task defines get_state")

    @classmethod
    def from_state(cls, params: dict, state: dict, arrays: dict[str, np.ndarray]):
        raise NotImplementedError("each task defines from_state")

    def training_sample(self, dataset: Dataset) -> Dataset:
        """The training examples to use from a training file (all of it by default)."""
        return dataset

    def draws_binary_examples(self) -> bool:
        """Whether ``training_sample`` attaches binary examples (``Dataset.binary``) for
        learners with indirect supervision (J-LIS); decided from parameters alone."""
        return False

    #: what a "not fitted" error tells to do (``exceptions.check_is_fitted``)
    _fit_hint: ClassVar[str] = "Call fit(dataset) on training data first."

    def __sklearn_is_fitted__(self) -> bool:
        """Whether ``fit`` ran (``fitted_``): the query ``exceptions.check_is_fitted``
        asks, as scikit-learn's does."""
        own = getattr(type(self), "is_fitted", None)
        if callable(own):
            # a task written to an earlier rule, which defined is_fitted (its own test of
            # what fit builds, such as a vocabulary) instead of setting fitted_
            return bool(own(self))
        return bool(getattr(self, "fitted_", False))

    # --- what a learner sees ---------------------------------------------------------------
    def structure_object(self):
        """The object that implements the structure's members: the task itself for a task
        that *is* its structure (``StructuredTask``, ``LatentBinaryTask``), the standalone
        structure a composed task built when it was fitted (``structure_``)."""
        return self

    def structure(self) -> "StructureView":
        """The narrow structure a learner trains on (the task must be fitted): the members
        of ``tasks.contracts.Structure`` and of the capabilities this task offers, and
        nothing else.  One view per task (it reads the task live), so that a fit's shared
        blocks, keyed by object, ship it to workers once."""
        check_is_fitted(self)
        params = self.get_params()
        view = _VIEWS.get(self)
        impl = self.structure_object()
        if view is None or not view.shows(params, impl):  # new, refitted, or set_params
            view = _VIEWS[self] = StructureView(self, params)
        return view


def learner_defaults_for(task_cls, learner_cls) -> dict:
    """The defaults task class ``task_cls`` gives ``learner_cls``'s options (its
    ``learner_defaults`` under the learner's registry name; {} for none)."""
    return dict(task_cls.learner_defaults.get(learner_cls.registry_name, {}))


def same_value(a, b) -> bool:
    """Whether two parameter values are equal and of the same type (identity when ``==``
    cannot say, as for arrays)."""
    try:
        return bool(a == b) and type(a) is type(b)
    except (ValueError, TypeError):
        return a is b


def set_counts(structure, **counts) -> None:
    """Set each of ``counts`` (a size such as ``n_labels``) on an immutable ``structure``
    as an int, or raise ValueError naming the class and the count unless it is an int >= 0
    (the shared check of the standalone structures' constructors)."""
    for name, value in counts.items():
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
            raise ValueError(f"{type(structure).__name__}: {name} must be an int >= 0, got "
                             f"{value!r}")
        object.__setattr__(structure, name, int(value))


def frozen_fields(*fields: str):
    """Class decorator of a standalone structure made of the few values its constructor sets
    (``fields``, in the constructor's order): it refuses any later assignment, pickles by
    those values and shows them in its repr (one copy of what each such structure needs)."""
    def __setattr__(self, name, value):
        raise AttributeError(f"a {type(self).__name__} is immutable; cannot set {name!r}")

    def __reduce__(self):
        return (type(self), tuple(getattr(self, f) for f in fields))

    def __repr__(self) -> str:
        shown = ", ".join(f"{f}={getattr(self, f)!r}" for f in fields)
        return f"{type(self).__name__}({shown})"

    def decorate(cls):
        cls.__setattr__, cls.__reduce__, cls.__repr__ = __setattr__, __reduce__, __repr__
        return cls
    return decorate


def set_choice(structure, name: str, value, choices: tuple) -> None:
    """Set ``name`` on an immutable ``structure`` to ``value``, one of ``choices``, or raise
    ValueError naming the class, the option and the choices."""
    if value not in choices:
        raise ValueError(f"{type(structure).__name__}: {name} must be one of {choices}, got "
                         f"{value!r}")
    object.__setattr__(structure, name, value)


class OwnStructure:
    """The base members of a structure (``tasks.contracts.Structure``) with their usual
    defaults: a mixin of the task classes that are their own structure and of standalone
    structure objects (``ChainStructure``)."""

    def subset(self, X, indices):
        """The examples ``X[i] for i in indices``, in the task's batch representation."""
        return [X[int(i)] for i in indices]

    def as_batch(self, X):
        """``X`` in the task's batch representation.

        scikit-learn's splitters index a custom sequence into a plain list of single
        examples; tasks whose batch is one array-backed object (a corpus) join such a list
        back into one here.  Learners call it at the top of ``fit`` and ``predict``.
        """
        return X

    def argmax_is_maximum(self) -> bool:
        """Whether the decoders return a true maximum of the score (with its status).

        False for a decoder that is a fixed procedure by design, such as decode-then-vote
        over several views: learners then skip the check that an argmax never scores below
        a known structure (it would not hold) and treat an objective increase as a warning.
        """
        return True


class MaxDecodableDefaults(OwnStructure):
    """The max-decodable capability: ``argmax`` (plain, and loss-augmented when ``y_true``
    is given), ``joint_feature`` and ``loss``, to be implemented; the batch forms default to
    loops over them, and structures with fast kernels override them.  ``example_size``
    (capability ``sized``) is kappa(x) for J-LIS.  Mixed into ``StructuredTask`` and into
    standalone structures (``ChainStructure``)."""

    def joint_feature(self, x, y) -> SparseVector:
        raise NotImplementedError("each structured task defines joint_feature")

    def argmax(self, x, w: np.ndarray, y_true=None, *, random_state=None) -> DecodeResult:
        """Best structure for ``x`` under ``w``; loss-augmented when ``y_true`` is given."""
        raise NotImplementedError("each structured task defines argmax")

    def loss(self, y_true, y_pred) -> float:
        raise NotImplementedError("each structured task defines loss")

    def argmax_results(self, X, w, Y=None, *, random_state=None) -> list[DecodeResult]:
        """``DecodeResult`` of every example (with its status), loss-augmented with ``Y``."""
        return loop_argmax_results(self, X, w, Y, random_state=random_state)

    def argmax_batch(self, X, w, Y=None, *, random_state=None) -> list:
        """The structures of ``argmax_results`` (fast kernels override this)."""
        return [r.structure for r in self.argmax_results(X, w, Y, random_state=random_state)]

    def example_size(self, x) -> int:
        """Size of one example (tokens), the J-LIS normaliser kappa(x)."""
        raise NotImplementedError("each task that supports J-LIS defines example_size")

    def joint_feature_difference(self, x, y_a, y_b) -> SparseVector:
        """Phi(x, y_a) - Phi(x, y_b), coalesced."""
        return self.joint_feature(x, y_a) - self.joint_feature(x, y_b)

    def joint_feature_differences(self, X, Y_a, Y_b) -> SparseRows:
        """Phi(x_i, y_a_i) - Phi(x_i, y_b_i) of every example of the batch ``X`` (a batch
        ``subset`` or ``as_batch`` returns), as the rows of one :class:`SparseRows`
        (fast kernels override this loop over ``joint_feature_difference``)."""
        return loop_joint_feature_differences(self, X, Y_a, Y_b)

    def loss_batch(self, Y_true, Y_pred) -> np.ndarray:
        """``loss`` of every pair, as a float64 array (fast kernels override this loop)."""
        return loop_loss_batch(self, Y_true, Y_pred)


class OwnStructureTask(OwnStructure, Task):
    """A task that is its own structure (``structure_object`` is the task), as a custom task
    may be (the built-in tasks hold theirs: :class:`ComposedTask`).  ``StructuredTask`` is
    the max-decodable one, ``LatentBinaryTask`` the latent-binary one."""


@functools.lru_cache(maxsize=None)
def _public_names(structure_class: type) -> frozenset:
    """The public names a structure class defines (what a composed task used to answer
    itself, when it was its structure); none for ``object``."""
    return frozenset(name for klass in structure_class.__mro__ if klass is not object
                     for name in vars(klass) if not name.startswith("_"))


class ComposedTask(Task):
    """A task that holds its structure: a standalone object of ``structure_class`` that
    ``fit`` and ``from_state`` build from the fitted featurizer (``_build_structure``, which
    sets ``structure_`` and ``fitted_``) and that ``structure()`` shows learners.

    The structure's members were the task's own while tasks were their structure: on a
    fitted task they still answer, through ``structure_``, with a ``DeprecationWarning``; a
    subclass that overrides one on the task (where it would now be ignored) is refused when
    the class is created.
    """

    #: the class of the structure ``_build_structure`` makes (a subclass may give its own)
    structure_class: ClassVar[type] = object
    #: the featurizer ``make_featurizer`` builds, whose parameters are the task's too
    #: (:func:`featurizer_param_defaults`); None: the task lists all its parameters itself
    featurizer_class: ClassVar[type | None] = None
    #: the task's defaults for its featurizer's parameters, where they are not the
    #: featurizer's (``{"affix_length": 4}``)
    featurizer_defaults: ClassVar[dict] = {}
    #: featurizer parameters the task sets itself, which are not the task's (``{"uses_pos":
    #: True}``)
    featurizer_fixed: ClassVar[dict] = {}

    def __init__(self, **featurizer_params):
        """Hold the featurizer's parameters given (the others at the task's defaults) as
        attributes, as a task holds its own; a name that is not one of them is a
        ``TypeError``, as Python's for any unexpected keyword."""
        defaults = featurizer_param_defaults(type(self))
        unknown = sorted(set(featurizer_params) - set(defaults))
        if unknown:
            raise TypeError(f"{type(self).__name__}() got an unexpected keyword argument "
                            f"{unknown[0]!r} (its parameters: {', '.join(self.param_defaults())})")
        for name, default in defaults.items():
            setattr(self, name, featurizer_params.get(name, default))

    def make_featurizer(self):
        """An unfitted featurizer (``featurizer_class``) of this task's parameters."""
        if self.featurizer_class is None:
            raise TypeError(f"{type(self).__name__} has no featurizer_class to make")
        params = {k: getattr(self, k) for k in featurizer_param_defaults(type(self))}
        return self.featurizer_class(**self.featurizer_fixed, **params)

    def _new_structure(self):
        """A new structure of ``structure_class`` for the fitted featurizer and labels."""
        raise NotImplementedError("each composed task builds its structure")

    def _build_structure(self) -> None:
        self.structure_ = self._new_structure()
        self.fitted_ = True

    def structure_object(self):
        """The structure this task was fitted to (``structure_``)."""
        structure = self.__dict__.get("structure_")
        if structure is None:
            check_is_fitted(self)
            # a fitted task pickled before tasks held their structure: build it now
            self._build_structure()
            structure = self.structure_
        return structure

    @property
    def n_features(self) -> int:
        """The weight vector's length (the structure's)."""
        return self.structure_object().n_features

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "structure_class" in vars(cls):  # written for the composed design: its own names
            return
        members = _public_names(cls.structure_class) - set(vars(ComposedTask))
        # what this class and the bases before the one that chose the structure class
        # define (a mixin's override counts: it would be ignored as well)
        mine = set()
        for klass in cls.__mro__:
            if "structure_class" in vars(klass) or klass is ComposedTask:
                break
            mine |= set(vars(klass))
        moved = sorted(name for name in mine if name in members)
        if moved:
            raise TypeError(
                f"{cls.__name__} defines {', '.join(moved)}, which "
                f"{'belongs' if len(moved) == 1 else 'belong'} to the structure "
                f"the task holds, not to the task: subclass {cls.structure_class.__name__} "
                f"with them and set structure_class = <that class> on {cls.__name__}")

    def __getattr__(self, name):
        # Python comes here too when a property's getter raised AttributeError (an unfitted
        # task's ``labels_``): run it again, so that its own message says why
        attr = getattr(type(self), name, None)
        if isinstance(attr, property) and attr.fget is not None:
            return attr.fget(self)
        # otherwise only for names the class does not have: the structure's, deprecated
        if name.startswith("_") or name not in _public_names(type(self).structure_class):
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        # an unfitted task has no structure yet: say so (NotFittedError is an AttributeError)
        check_is_fitted(self)
        warnings.warn(f"{type(self).__name__}.{name} is deprecated: the task holds its "
                      f"structure; use task.structure_.{name}",
                      DeprecationWarning, stacklevel=2)
        return getattr(self.structure_object(), name)


class StructuredTask(MaxDecodableDefaults, Task):
    """A task that is its own structure, with labelled structures (capability
    ``max-decodable``): subclasses implement ``argmax``, ``joint_feature`` and ``loss``
    (:class:`MaxDecodableDefaults`).  A task may instead hold a standalone structure, as the
    sequence tasks hold a ``ChainStructure`` (``Task.structure_object``)."""

    capabilities: ClassVar[frozenset] = frozenset({MAX_DECODABLE})


def register_task(cls: type[Task]) -> type[Task]:
    """Class decorator: register ``cls`` under its ``name`` in ``latentstruct.registry.TASKS``
    (the registry, and ``get_task_class``, live there; this module re-exports them)."""
    if not cls.name:
        raise ValueError(f"{cls.__name__} needs a non-empty name to be registered")
    TASKS[cls.name] = cls
    return cls


class LatentBinaryDefaults(OwnStructure):
    """The latent-binary capability of a structure: f(x) = max_{h in C(x)} w . Phi(x, h).

    Subclasses implement ``latent_argmax`` (the best legal h under w, with its score
    ``w . Phi(x, h)``), ``latent_feature`` (Phi(x, h) as a sparse vector, including any
    bias feature that every structure shares) and ``heuristic_weights`` (the fixed part
    scores of the two-stage baseline).  ``latent_argmax_batch`` and ``decision_batch``
    default to loops and may be overridden with fast kernels.  Mixed into
    :class:`LatentBinaryTask` (a task that is its own structure) and into standalone
    structures (``TranslitStructure``).
    """

    capabilities: ClassVar[frozenset] = frozenset({LATENT_BINARY})

    def latent_argmax(self, x, w: np.ndarray, *, random_state=None) -> DecodeResult:
        raise NotImplementedError("each latent task defines latent_argmax")

    def latent_feature(self, x, h) -> SparseVector:
        raise NotImplementedError("each latent task defines latent_feature")

    def heuristic_weights(self) -> np.ndarray:
        """Weights whose argmax is the two-stage system's fixed structure."""
        raise NotImplementedError("each latent task defines heuristic_weights")

    def latent_argmax_batch(self, X, w, *, random_state=None) -> list[DecodeResult]:
        return [self.latent_argmax(x, w, random_state=random_state) for x in X]

    #: f(x) = max_h w . Phi(x, h) for every example (the contract's function itself, so a
    #: learner can tell that a structure kept it: ``tasks.contracts.latent_argmax_decisions``)
    decision_batch = latent_argmax_decisions


class BinaryDecisions(Task):
    """What a latent-binary *task* adds to its structure: labels +-1 read and checked
    (``training_sample``) and the confusion-matrix report of its decisions; LCLR as the
    default learner.  The base of :class:`LatentBinaryTask` and of composed latent-binary
    tasks (``TransliterationTask``)."""

    capabilities: ClassVar[frozenset] = frozenset({LATENT_BINARY})
    default_learner: ClassVar[str] = "lclr"

    def training_sample(self, dataset: Dataset) -> Dataset:
        """The whole training file, once its labels are checked: +-1, with both classes
        present (``tasks.validation.check_binary_training_labels``; a one-class file is an
        InputError before any parsing or featurising)."""
        check_binary_training_labels(dataset, self)
        return dataset

    def report(self, dataset: Dataset, predictions) -> dict:
        """The confusion matrix of +-1 ``predictions`` against the gold labels."""
        return binary_report(np.asarray(self.encode_targets(dataset.targets)),
                             np.asarray(predictions))


class ComposedBinaryTask(BinaryDecisions, ComposedTask):
    """A latent-binary task that holds its structure (``structure_``): the +-1 decisions of
    :class:`BinaryDecisions` over the standalone structure of :class:`ComposedTask`
    (transliteration, paraphrase/RTE, grammaticality)."""


class LatentBinaryTask(LatentBinaryDefaults, BinaryDecisions):
    """A binary decision over a hidden structure: f(x) = max_{h in C(x)} w . Phi(x, h),
    a task that is its own structure (:class:`LatentBinaryDefaults`, before the task's
    :class:`BinaryDecisions`).

    Used by LCLR, its two-stage baseline and the latent online learners.  Examples are
    ``x`` with labels ``y`` in {-1, +1}; the structure ``h`` is never observed.

    Subclasses implement ``latent_argmax`` (the best legal h under w, with its score
    ``w . Phi(x, h)``), ``latent_feature`` (Phi(x, h) as a sparse vector, including any
    bias feature that every structure shares) and ``heuristic_weights`` (the fixed part
    scores of the two-stage baseline).  ``decision_batch`` may be overridden with a fast
    kernel.  ``targets`` of a binary dataset are the labels, as an int array of +-1.
    """

    capabilities: ClassVar[frozenset] = frozenset({LATENT_BINARY})
    default_learner: ClassVar[str] = "lclr"


#: the view of each task (``Task.structure``), dropped with the task
_VIEWS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


class StructureView:
    """What a learner sees of a fitted task (``task.structure()``): the members of
    ``tasks.contracts.Structure`` and those of the protocols of the capabilities the task
    offers, each delegated to the task's structure object (``Task.structure_object``: the
    task itself, or the standalone structure a composed task holds), and nothing else: no
    reading, featurising, sampling, evaluating by name or saving.  Immutable; pickles as
    the task it shows (a worker process rebuilds the view).

    It reads the task live: a composed task replaces its immutable structure when the
    structure changes (a grammaticality task's supervised chunker is attached after ``fit``,
    and the learner built before that must see it), so each member is taken from the
    task's structure object of the moment."""

    __slots__ = ("_task", "_impl", "_params", "_members", "identity", "capabilities",
                 "__weakref__")

    def __init__(self, task: Task, params: dict | None = None):
        # the members are worked out once, for the task's parameters now (they decide the
        # capabilities): a learner reaches them per example, so not on every access
        params = task.get_params() if params is None else params
        caps = frozenset(type(task).offered_capabilities(params))
        impl = task.structure_object()
        members = structure_members(caps, has=lambda m: hasattr(type(impl), m))
        identity = task_identity(task, params)
        for name, value in (("_task", task), ("_impl", impl), ("_params", dict(params)),
                            ("_members", members), ("identity", identity),
                            ("capabilities", caps)):
            object.__setattr__(self, name, value)

    def shows(self, params: dict, impl=None) -> bool:
        """Whether this view was made for a task with these parameters (and, when given,
        this structure object: a refitted composed task holds a new one)."""
        if impl is not None and impl is not self._impl:
            return False
        return params.keys() == self._params.keys() and all(
            same_value(value, self._params[name]) for name, value in params.items())

    def __getattr__(self, name):
        if name.startswith("__"):  # copy, pickle and the like probe special names
            raise AttributeError(name)
        if name in self._members:
            return getattr(self._task.structure_object(), name)
        raise AttributeError(
            f"{name!r} is not part of the structure a learner sees of task "
            f"{self._task.name!r} (its members: tasks.contracts.Structure and the protocols "
            f"of {', '.join(sorted(self.capabilities))})")

    def __setattr__(self, name, value):
        raise AttributeError(f"a structure is immutable; cannot set {name!r}")

    def __reduce__(self):
        return (StructureView, (self._task,))

    def __repr__(self) -> str:
        return f"<structure of task {self.identity.name!r}: {sorted(self.capabilities)}>"

    # the base members a task has under other names or not at all
    @property
    def n_features(self) -> int:
        return self._task.structure_object().n_features

    def as_batch(self, X):
        return self._task.structure_object().as_batch(X)

    def subset(self, X, indices):
        return self._task.structure_object().subset(X, indices)

    def argmax_is_maximum(self) -> bool:
        return self._task.structure_object().argmax_is_maximum()

    def score(self, Y_true, Y_pred) -> float:
        """The task's main metric (``score_metric``) of encoded predictions."""
        task = self._task
        return float(task.evaluate(list(Y_true), Y_pred)[task.score_metric])


def task_identity(task, params: dict | None = None) -> Identity:
    """Who ``task`` is, as data: its name and parameters (messages, checkpoints); needs no
    fitted task, so the command line checks a checkpoint before any data is read."""
    params = task.get_params() if params is None else params
    return Identity(task.name, params, frozenset(task.local_params),
                    kind=type(task).__name__)
