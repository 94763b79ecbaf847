"""The estimator base class; the estimators themselves and ``load`` are in the package's
``__init__``.  ``fit`` and ``partial_fit`` train through the one training path the command
line also takes (``pipelines.training``)."""

from __future__ import annotations

import contextlib
import inspect
from dataclasses import replace
from typing import ClassVar

import numpy as np
from sklearn.base import BaseEstimator

from ..exceptions import ConfigError, InputError, check_is_fitted
from ..learners import get_learner_class
from ..learners.persistence import save_trained
from ..params import skip_parameter_validation
from ..pipelines.training import plan_training, run_training, start_online
from ..tasks.base import learner_defaults_for
from ..tasks import get_task_class
from ..tasks.base import same_value as _same
from ..tasks.contracts import LATENT_BINARY
from .labels import (
    allowed_label_ids,
    check_declared,
    check_in_classes,
    class_labels,
    declared_classes,
    json_scalar,
    label_key,
    label_values,
    object_array,
    same_classes,
    unseen_key,
    value_key,
)
from .online import OnlineOnly

__all__ = ["Estimator", "ESTIMATORS", "FOR_TASK"]

#: estimator class name -> class, for ``load`` (a model file names its estimator by this
#: key; nothing in a file is ever imported)
ESTIMATORS: dict[str, type] = {}
#: the estimator ``load`` gives a model file trained on the command line, by task name
FOR_TASK: dict[str, str] = {}
# the constructor's own parameters; every other keyword is a task or learner option
_OWN = ("task", "learner", "pos_label")


class Estimator(BaseEstimator):
    """A task and a learner as one scikit-learn estimator on raw Python data.

    Parameters
    ----------
    task : str or None
        A registered task name (``latentstruct options`` lists them); None: the class's
        default.  The raw form of ``X`` and ``y`` is the task's (``Task.make_dataset``).
    learner : str or None
        A registered learner name; None: the task's default learner.
    pos_label : label or None
        Binary tasks: the class of ``y`` that is positive, the one a latent structure
        supports (LCLR's f(x) = max_h w . Phi(x, h) >= 0 is not symmetric in the classes:
        a paraphrase is a pair with a good alignment, a non-paraphrase one without).  None:
        1 (or True) when ``y`` holds +1/-1, 1/0 or True/False; other labels need it.
    **options
        Any option of the task or of the learner, by name (``C=0.1``, ``max_iter=20``,
        ``window=1``); stored unchanged and checked in ``fit``, like scikit-learn's
        hyperparameters.  ``learner__C`` and ``task__window`` are accepted too.

    The named estimators (``Tagger`` and the others) spell out in their signatures, as
    keyword-only parameters, the learners' common hyperparameters and every option of
    their tasks, each defaulting to its real value for the class's default pair (``Tagger``:
    ``pos`` with ``ssvm``, so ``C=0.1, max_iter=50, tol=0.05``), which ``get_params``
    shows.  With another task or learner a keyword left at that value stands for the
    pair's own default (``Tagger(learner="perceptron").get_params()["max_iter"]`` is the
    perceptron's 10, ``Tagger(task="citations")``'s ``window`` is 1), and a keyword the pair
    does not take is ignored while at it; any other value is the option's value (or, for an
    option the pair does not take, refused by ``fit``).  So one value cannot be asked for
    explicitly with another pair: the class's own default (``Tagger(learner="perceptron",
    max_iter=50)`` trains the perceptron's 10 epochs; give 49 or 51, or use
    ``Estimator(task="pos", learner="perceptron", max_iter=50)``).  They keep ``**options``
    because the learner is itself a parameter: its thirteen choices have some forty
    options between them (``c2`` of ``crf``, ``eta0`` of ``sgd-ssvm``, ``init`` of
    ``lclr``), which a fixed signature could only list as a union that mostly does not
    apply.  This generic class takes every option through ``**options``: its task is any
    registered one.

    Attributes
    ----------
    task_ : Task
        The fitted task (feature index, labels): the structure the learner decodes over,
        holding its featurizer.
    featurizer_ : transformer
        The task's fitted featurizer (``task_.featurizer_``, a scikit-learn transformer:
        ``featurizer_.transform(records)`` gives the numbers ``learner_`` is fitted on),
        so an estimator is its featurizer plus its learner.
    learner_ : estimator
        The fitted learner (``coef_``, ``n_iter_``, ``objective_curve_``).
    classes_ : ndarray or list
        Binary tasks: the two classes of ``y``, ``classes_[1]`` the positive one; a
        classifier's class labels (any of bool, int, float, str); a tagger's tag set (a
        list, like sklearn-crfsuite's ``CRF.classes_``).
    """

    _default_task: ClassVar[str | None] = None
    #: task names this estimator takes (None: every registered task)
    _tasks: ClassVar[tuple[str, ...] | None] = None

    #: the task and learner options the class's signature names (set from the signature of
    #: ``__init__``; the generic ``Estimator`` takes every option through ``**options``),
    #: and their defaults there (the class's default pair's values)
    _explicit: ClassVar[tuple[str, ...]] = ()
    _signature_defaults: ClassVar[dict] = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        keywords = {name: p.default
                    for name, p in inspect.signature(cls.__init__).parameters.items()
                    if name != "self" and name not in _OWN and p.kind is p.KEYWORD_ONLY}
        cls._explicit = tuple(keywords)
        cls._signature_defaults = keywords
        ESTIMATORS[cls.__name__] = cls
        for name in cls._tasks or ():
            FOR_TASK.setdefault(name, cls.__name__)

    def __init__(self, task=None, learner=None, pos_label=None, **options):
        self.task = task
        self.learner = learner
        self.pos_label = pos_label
        self._set_options(options)

    # --- parameters --------------------------------------------------------------------
    def _task_name(self) -> str:
        name = self.task if self.task is not None else self._default_task
        if name is None:
            raise ConfigError(f"{type(self).__name__} needs task=NAME (a registered task; "
                              f"`latentstruct options` lists them)")
        if not isinstance(name, str):
            raise ConfigError(f"{type(self).__name__} needs task=NAME, a registered task's name "
                              f"(a str), got {name!r}")
        if self._tasks is not None and name not in self._tasks:
            raise ConfigError(f"{type(self).__name__} takes task {' or '.join(map(repr, self._tasks))}, "
                              f"got {name!r}; use latentstruct.Estimator(task={name!r}) for it")
        return name

    def _classes(self):
        task_cls = get_task_class(self._task_name())
        if self.learner is not None and not isinstance(self.learner, str):
            raise ConfigError(f"{type(self).__name__} needs learner=NAME, a registered learner's "
                              f"name (a str) or None, got {self.learner!r}")
        learner_cls = get_learner_class(self.learner or task_cls.default_learner)
        return task_cls, learner_cls

    def _set_options(self, options: dict) -> None:
        """Store ``**options`` unchanged (no logic in ``__init__``).  They are kept apart from
        the named keywords, in a private dict: the public attributes an ``__init__`` sets
        are its signature's parameters, as scikit-learn checks; each reads as an attribute
        all the same (``est.c2``)."""
        self._extra_options = dict(options)

    def _store(self, key, value) -> None:
        """Set ``key``: a parameter of the signature as its attribute, another option in
        the private dict of ``**options``."""
        if key in _OWN or key in self._signature_defaults:
            setattr(self, key, value)
        else:
            self.__dict__.pop(key, None)  # a public attribute set by hand, or by a pickle
            self.__dict__.setdefault("_extra_options", {})[key] = value

    def __getattr__(self, name):
        # the options given through **options read as attributes; anything else: the
        # normal lookup's own AttributeError (a property's message, scikit-learn's)
        extra = self.__dict__.get("_extra_options", {})
        if name in extra:
            return extra[name]
        return object.__getattribute__(self, name)

    def _at_signature_default(self, key, value) -> bool:
        """Whether ``key`` is a keyword of the signature left at its default there (it
        then stands for the pair's own default)."""
        return key in self._signature_defaults and _same(value, self._signature_defaults[key])

    def _options(self) -> dict:
        """The options set on this instance (constructor keywords and ``set_params``); a
        named keyword left at its signature default is not set (the pair's own default
        applies)."""
        given = {k: v for k, v in vars(self).items()
                 if k not in _OWN and not k.startswith("_") and not k.endswith("_")}
        given.update(self.__dict__.get("_extra_options", {}))
        return {k: v for k, v in given.items() if not self._at_signature_default(k, v)}

    def _defaults(self) -> tuple[dict, dict]:
        task_cls, learner_cls = self._classes()
        learner_defaults = learner_cls().get_params(deep=False)
        learner_defaults.pop("structure", None)
        learner_defaults.update(learner_defaults_for(task_cls, learner_cls))
        return task_cls.param_defaults(), learner_defaults

    def get_params(self, deep: bool = True) -> dict:
        """``task``, ``learner`` and every option of the task and the learner with its value
        (the default where none was set), by flat name."""
        params = {"task": self.task, "learner": self.learner, "pos_label": self.pos_label}
        try:
            task_defaults, learner_defaults = self._defaults()
        except ConfigError:  # an unknown task or learner name: reported by fit
            task_defaults = learner_defaults = {}
        options = self._options()
        for key, value in {**task_defaults, **learner_defaults}.items():
            if key in options:
                params[key] = options[key]
            elif key in self._signature_defaults and _same(getattr(self, key), value):
                params[key] = getattr(self, key)  # the object stored (clone checks identity)
            else:
                params[key] = value
        for key, value in options.items():  # set, but not an option of this pair: fit says so
            params.setdefault(key, value)
        for key in self._explicit:  # named by the signature, not an option of this pair
            params.setdefault(key, getattr(self, key))
        return params

    def set_params(self, **params) -> "Estimator":
        """Set ``task``, ``learner`` or options, by flat name or prefixed ``learner__C`` /
        ``task__window``; an unknown name is a ``ConfigError`` listing the valid ones."""
        for key in _OWN:  # first: they decide which options exist
            if key in params:
                setattr(self, key, params.pop(key))
        try:
            task_defaults, learner_defaults = self._defaults()
        except ConfigError:  # an unknown task or learner name: stored, fit reports it
            for key, value in params.items():
                self._store(key.partition("__")[2] or key, value)
            return self
        for key, value in params.items():
            if self._at_signature_default(key, value):  # back to the pair's default
                self._store(key, value)
                continue
            prefix, sep, name = key.partition("__")
            if sep:
                valid = {"task": task_defaults, "learner": learner_defaults}.get(prefix)
                if valid is None or name not in valid:
                    raise self._unknown(key, task_defaults, learner_defaults)
                key = name
            elif key not in task_defaults and key not in learner_defaults:
                raise self._unknown(key, task_defaults, learner_defaults)
            self._store(key, value)
        return self

    def _unknown(self, key, task_defaults, learner_defaults) -> ConfigError:
        task_cls, learner_cls = self._classes()
        return ConfigError(
            f"unknown parameter {key!r} for {type(self).__name__} with task {task_cls.name!r} and "
            f"learner {learner_cls.registry_name!r}; task options: "
            f"{', '.join(sorted(task_defaults)) or '-'}; learner options: "
            f"{', '.join(sorted(learner_defaults))} (also as task__NAME / learner__NAME)")

    def _routed(self):
        """(task class, learner class, task options, learner options), checked."""
        task_cls, learner_cls = self._classes()
        task_defaults, learner_defaults = self._defaults()
        task_opts, learner_opts = {}, {}
        for key, value in self._options().items():
            if key in task_defaults:
                task_opts[key] = value
            elif key in learner_defaults:
                learner_opts[key] = value
            else:
                raise self._unknown(key, task_defaults, learner_defaults)
        reserved = [k for k in task_opts | learner_opts if hasattr(type(self), k)]
        if reserved:  # pragma: no cover - a registry invariant (no option shadows a method)
            raise ConfigError(f"options {reserved} shadow methods of {type(self).__name__}")
        return task_cls, learner_cls, task_opts, learner_opts

    def __repr__(self, N_CHAR_MAX=700) -> str:
        """The parameters that differ from their defaults, as scikit-learn prints them."""
        shown = {k: getattr(self, k) for k in _OWN if getattr(self, k) is not None}
        try:
            task_defaults, learner_defaults = self._defaults()
        except ConfigError:
            task_defaults = learner_defaults = {}
        defaults = {**task_defaults, **learner_defaults}
        shown.update({k: v for k, v in self._options().items()
                      if k not in defaults or not _same(v, defaults[k])})
        text = ", ".join(f"{k}={v!r}" for k, v in shown.items())
        return f"{type(self).__name__}({text})"

    # --- fitting and prediction --------------------------------------------------------
    #: how the labels of ``y`` reach the task: "labels" (class labels of any JSON scalar
    #: type, given to the task as strings), or None (as given: tag lists, trees); binary
    #: tasks always use "binary" (two classes as -1/+1, see ``pos_label``)
    _label_mode: ClassVar[str | None] = None

    def _mode(self, task_cls) -> str | None:
        return "binary" if LATENT_BINARY in task_cls.offered_capabilities() else self._label_mode

    def _encode_y(self, y, task_cls, declared=None):
        """``y`` as the task takes it; sets ``classes_`` for binary and label modes, from
        the labels of ``y`` or, given ``declared`` (``partial_fit``'s ``classes``), from
        those, every label of ``y`` having to be one of them.  Labels are compared by value
        (``labels.label_values``: 1, 1.0 and True are one class, as in ``np.unique``), and
        ``classes_`` is their sorted distinct values in the caller's (unified) type."""
        mode = self._mode(task_cls)
        if mode is None:
            return y
        y = object_array(y)
        if declared is None:
            values = label_values(y, "y")
        else:
            values = label_values(declared, "classes")
            check_in_classes(y, values)
        classes = np.unique(values)
        if mode == "labels":
            self.classes_ = classes
            # the task's label of each value is the string of its class, so that 1, 1.0 and
            # True reach it as the one label their class has (str(v) would make three)
            key = dict(zip(map(value_key, classes), map(label_key, classes)))
            return [key[value_key(v)] for v in y]
        if len(classes) != 2:
            raise InputError(
                f"y holds {len(classes)} class{'es' if len(classes) != 1 else ''} "
                f"({', '.join(map(repr, classes[:5].tolist()))}); a binary "
                f"{type(self).__name__} learns to tell two classes apart: give examples of both")
        plain = classes.tolist()
        positive = self.pos_label
        if positive is None:
            if not all(isinstance(c, (bool, int, float)) and c in (-1, 0, 1) for c in plain):
                raise ConfigError(
                    f"y holds the classes {plain[0]!r} and {plain[1]!r}: say which is "
                    f"positive with pos_label=... (the class a latent structure supports: "
                    f"{type(self).__name__}'s decision max_h w . Phi(x, h) >= 0 is not "
                    f"symmetric); labels +1/-1, 1/0 or True/False need none")
            positive = 1
        matches = [k for k, c in enumerate(plain) if value_key(c) == value_key(positive)]
        if not matches:
            raise ConfigError(f"pos_label={positive!r} is not a class of y (classes: "
                              f"{plain[0]!r}, {plain[1]!r})")
        self.classes_ = classes[[1 - matches[0], matches[0]]]  # [negative, positive]
        return self._binary_targets(y)

    def _binary_targets(self, y) -> np.ndarray:
        """+1 where a label of ``y`` equals the positive class ``classes_[1]`` by value."""
        positive = value_key(self.classes_[1])
        return np.array([1 if value_key(v) == positive else -1 for v in y], dtype=np.int64)

    def _task_labels(self) -> list[str]:
        """The task's label string of each class of ``classes_``, in that order, matched by
        value (a model file written before labels were keyed by value may spell the class
        1.0 as "1")."""
        return class_labels(self.classes_, self.task_.labels_)

    def _encode_known(self, y, *, training: bool = False):
        """Gold ``y`` for ``score`` (``training``: for ``partial_fit``).  A binary task's
        labels must be the model's two classes; a classifier's labels are scored as they
        are (a label the model never saw is always wrong), but trained on only when they
        are among ``classes_``."""
        mode = self._mode(type(self.task_))
        if mode is None:
            return y
        y = object_array(y)
        if mode == "binary" or training:
            check_in_classes(y, self.classes_)
        if mode == "labels":
            names = self._task_labels()
            key = dict(zip(map(value_key, self.classes_), names))
            # a label equal to no class must match no prediction: a string that is none of
            # the task's labels (str(v) would make the string "1" score as the class 1)
            return [key[value_key(v)] if value_key(v) in key else unseen_key(v, names)
                    for v in y]
        return self._binary_targets(y)

    def _decode(self, predictions):
        mode = self._mode(type(self.task_))
        if mode == "binary":
            return self.classes_[(np.asarray(predictions) > 0).astype(int)]
        if mode == "labels":
            position = {name: k for k, name in enumerate(self._task_labels())}
            return self.classes_[np.array([position[p] for p in predictions], dtype=np.intp)]
        return predictions

    def fit(self, X, y, **fit_params) -> "Estimator":
        """Build the task from its options, fit it and the learner on raw ``X``, ``y``.

        ``fit_params`` go to the learner's ``fit`` (``checkpoint=``, ``resume=``).
        Returns ``self``.
        """
        task_cls, learner_cls, task_opts, learner_opts = self._routed()
        # before any data is touched: the pair must fit and the values must be valid
        plan = plan_training(task_cls, learner_cls, task_opts, learner_opts)
        if y is None:
            raise InputError(f"{type(self).__name__} requires y to be passed, but the target y "
                             f"is None: fit needs targets y (one per example)")
        y = self._encode_y(y, task_cls)
        result = run_training(plan, lambda task: task.make_dataset(X, y), fit_kw=fit_params,
                              verbose=bool(plan.learner_opts.get("progress", False)))
        self.task_ = result.task
        self.learner_ = result.learner
        if self._mode(task_cls) is None:  # tag sets: as sklearn-crfsuite's CRF.classes_
            labels = getattr(result.task, "labels_", None)
            self.classes_ = None if labels is None else list(labels)
        return self

    @OnlineOnly
    def partial_fit(self, X, y, classes=None) -> "Estimator":
        """One online pass over the batch ``X``, ``y``, continuing the current model
        (scikit-learn's ``partial_fit``); for the online learners only: ``perceptron``,
        ``latent-pa``, ``sgd-ssvm`` and ``crf`` with ``solver="sgd"``.  On an estimator
        whose learner trains in batch this attribute is absent (``hasattr`` is False) and
        using it raises an ``AttributeError`` that names the online learners.

        classes : list or None
            The full label set of the whole stream (tags, classes, relations), required on
            the first call, as scikit-learn's ``partial_fit`` requires it; later calls may
            omit it or must repeat it unchanged.  A label outside it, in any batch, is
            refused (``UnseenLabelError``, an ``InputError`` naming the label and the
            model's labels) before any weight changes: the model has no weights for it.

        The first call (on an estimator neither fitted nor partially fitted) builds the task
        from its options and fits it on this batch with ``classes`` declared: the feature
        index is fixed then (``feature_index="index"``: attributes first seen in a later
        batch have no weight; ``feature_index="hashing"``: every attribute has one, the
        choice for a stream with new vocabulary).  Every call then featurises its batch with
        that task and makes one ``learner_.partial_fit`` pass; after ``fit``, a call
        continues ``fit``'s model.  So with ``shuffle=False`` and hashing, calls on batches
        B1, ..., Bk give the model of one pass (``max_iter=1``) over B1 + ... + Bk.
        Returns self.
        """
        if y is None:
            raise InputError(f"{type(self).__name__} requires y to be passed, but the target y "
                             f"is None: partial_fit needs targets y (one per example)")
        first = getattr(self, "learner_", None) is None
        if not first:
            self._check_same_classes(classes)
            y = self._encode_known(y, training=True)
            dataset = self.task_.make_dataset(X, y)
        else:
            dataset = self._start_online(X, y, classes)
        task = self.task_
        # the first call checked every value (plan_training); a later one checks the
        # learner's on entering its partial_fit, as scikit-learn's partial_fit does
        with skip_parameter_validation() if first else contextlib.nullcontext():
            self.learner_.partial_fit(task.featurize(dataset),
                                      task.training_targets(dataset))
        return self

    def _start_online(self, X, y, classes):
        """The first ``partial_fit`` call's preparation (the task built from its options and
        fitted on ``X``, ``y`` with ``classes`` declared; the learner built, not updated);
        returns the dataset of ``X``, ``y``."""
        task_cls, learner_cls, task_opts, learner_opts = self._routed()
        plan = plan_training(task_cls, learner_cls, task_opts, learner_opts)
        declared = declared_classes(classes, type(self).__name__)
        mode = self._mode(task_cls)
        if declared is None and mode is not None:
            raise ConfigError(
                f"{type(self).__name__}.partial_fit needs classes=[...] on its first "
                f"call: every class of the stream (a batch may hold some of them only)")
        y = self._encode_y(y, task_cls, declared)

        # the task's labels, in the order of classes= (the task names a bad one by its
        # position there): a classifier's classes as the strings it takes them as (one
        # per class by value), a tagger's tags as given (the task checks them)
        labels = None if declared is None or mode == "binary" else (
            [label_key(c) for c in label_values(declared, "classes")] if mode
            else list(declared))

        def first_batch(task):
            batch = task.make_dataset(X, y)
            if labels is not None:
                batch = replace(batch, labels=tuple(labels))
            return batch

        started = start_online(plan, first_batch,
                               verbose=bool(plan.learner_opts.get("progress", False)))
        if mode != "binary":  # a binary task's classes are checked above
            check_declared(started.task, labels, type(self).__name__)
        self.task_, self.learner_ = started.task, started.learner
        dataset = started.dataset
        if mode is None:
            labels = getattr(started.task, "labels_", None)
            self.classes_ = None if labels is None else list(labels)
        return dataset

    @OnlineOnly
    def begin_partial_fit(self, X, y, classes=None) -> "Estimator":
        """Fix the model's task on ``X``, ``y`` without training: what the first
        :meth:`partial_fit` call does before its pass.

        The task is built from its options and fitted on ``X``, ``y`` (the feature index, and
        the label set: ``classes``, required as in :meth:`partial_fit`, with every label of
        ``y`` among them), and the learner is built; no weight is set.  Every later
        :meth:`partial_fit` call then trains, one pass per call, with that feature index: so
        a stream whose batches are small can have the features of the whole training data
        (``feature_index="index"`` fixes the index on the data the task is fitted on).
        ``predict`` needs at least one ``partial_fit`` call after it.  For the online
        learners only, as :meth:`partial_fit`.  Returns self.
        """
        if y is None:
            raise InputError(f"{type(self).__name__} requires y to be passed, but the target y "
                             f"is None: begin_partial_fit needs targets y (one per example)")
        if getattr(self, "learner_", None) is not None:
            raise ConfigError(f"{type(self).__name__}.begin_partial_fit starts a model; this one "
                              f"is fitted already: continue it with partial_fit, or clone it")
        self._start_online(X, y, classes)
        return self

    def _check_same_classes(self, classes) -> None:
        """A later ``partial_fit`` call's ``classes``: None, or the model's own."""
        if classes is None:
            return
        mine = list(self.classes_) if self.classes_ is not None else []
        given = list(classes) if not isinstance(classes, (str, bytes)) else [classes]
        if not same_classes(given, mine):  # by value: [1.0, 0] repeats the classes [0, 1]
            raise ConfigError(
                f"classes={given!r} differs from the classes of the model being trained "
                f"({[json_scalar(c) for c in mine]!r}); a stream's label set is fixed on the "
                f"first call to partial_fit: omit classes on later calls, or train a new model")

    def __sklearn_is_fitted__(self) -> bool:
        return getattr(self, "learner_", None) is not None

    @property
    def n_iter_(self):
        """The learner's iterations (``learner_.n_iter_``), as scikit-learn's iterative
        estimators give them; AttributeError before ``fit``."""
        return self.learner_.n_iter_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False  # lists of sentences, pairs, texts, ...
        tags.non_deterministic = False
        return tags

    @property
    def featurizer_(self):
        """The fitted featurizer of ``task_`` (raw records to the numbers ``learner_``
        takes); scikit-learn's NotFittedError before ``fit``."""
        check_is_fitted(self)
        return self.task_.featurizer_

    def _featurise(self, X, y=None):
        """``(dataset, featurised X)``; unlabelled sentences of feature dicts take the task's
        fast path when it has one (``featurize_raw``: the same featurised X, no dataset, so
        ``dataset`` is None then)."""
        check_is_fitted(self)
        fast = getattr(self.task_, "featurize_raw", None) if y is None else None
        if fast is not None:
            Xf = fast(X)
            if Xf is not None:
                return None, Xf
        dataset = self.task_.make_dataset(X, y)
        return dataset, self.task_.featurize(dataset)

    def predict(self, X, *, allowed=None) -> list:
        """Predictions for raw ``X``, in the raw form of ``y`` (tag lists, heads, labels).

        allowed : list or None
            Sequence models: the labels each token may take, kept exactly (with the model's
            own constraints, a chunker's well-formed tags).  One entry per sentence: None
            (any labelling) or one entry per token, None (any label), a label (forced) or a
            collection of labels, e.g. ``[[None, "B-NP", {"I-NP", "O"}], None]``.  A label
            the model lacks, a wrong count, or a restriction no labelling keeps is an
            ``InputError`` naming the sentence and token."""
        _, Xf = self._featurise(X)
        if allowed is None:
            return self._decode(self.task_.decode_predictions(self.learner_.predict(Xf)))
        ids = self._allowed_ids(allowed, len(Xf))
        return self._decode(self.task_.decode_predictions(self.learner_.predict(Xf, allowed=ids)))

    def predict_nbest(self, X, k: int = 5, *, allowed=None) -> list[list[tuple]]:
        """The ``k`` best predictions of every example of raw ``X``, best first: per example
        a list of up to ``k`` ``(prediction, score, probability)`` tuples, the prediction in
        the raw form of ``y`` (a tag list), ``score`` the model's ``w·Φ(x, y)`` and
        ``probability`` ``p(y | x)`` for a probabilistic learner (``learner="crf"``; the
        probabilities of all labellings sum to 1) and None otherwise.  Exact k-best Viterbi,
        under the model's constraints and ``allowed`` (as in :meth:`predict`; the
        probabilities are then conditioned on it).  The first is :meth:`predict`'s; fewer
        than ``k`` come back when fewer labellings exist."""
        _, Xf = self._featurise(X)
        ids = None if allowed is None else self._allowed_ids(allowed, len(Xf))
        lists = self.learner_.predict_nbest(Xf, k, allowed=ids)
        return [[(self._decode(self.task_.decode_predictions([y]))[0], score, p)
                 for y, score, p in best] for best in lists]

    def explain_prediction(self, x, *, allowed=None):
        """Why the model labels the one sequence ``x`` (``X[i]``) as it does: an
        ``estimators.explain.PredictionExplanation`` with ``.labels``, ``.score``,
        ``.contributions`` (``(position, kind, feature, label, value)`` of every state and
        transition part; their values sum to ``.score``), ``.margin`` to the runner-up and
        where they first differ, and for a CRF ``.probability`` and per-token
        ``.marginals``.  Prints as text; a notebook shows it as an HTML table.
        ``allowed``: one sentence's entry of :meth:`predict`'s.

        A graph model (task ``graph``) explains one graph ``x`` (``(node_features,
        edges)``): an ``estimators.graph_explain.GraphExplanation`` of every node and edge
        part's share, the runner-up and the nodes where it differs."""
        from .explain import explain_prediction

        check_is_fitted(self)
        if callable(getattr(getattr(self.task_, "structure_", None), "runner_up", None)):
            from .graph_explain import explain_graph

            if allowed is not None:
                raise ConfigError("allowed= restricts a sequence's labels; a graph model "
                                  "explains its prediction without it")
            return explain_graph(self.task_, self.learner_, x)
        ids = None if allowed is None else self._allowed_ids([allowed], 1)[0]
        return explain_prediction(self.task_, self.learner_, x, allowed=ids)

    def explain_weights(self, top: int = 10):
        """What the model learned: each label's ``top`` largest positive and negative state
        weights by feature name, and the transition, start and end weights (an
        ``estimators.explain.WeightsExplanation``; text, or HTML in a notebook)."""
        from .explain import explain_weights

        check_is_fitted(self)
        return explain_weights(self.task_, self.learner_, top=top)

    def _allowed_ids(self, allowed, n_examples: int) -> list:
        """``allowed`` (label names) as label ids, for a task that offers allowed labels."""
        from ..tasks.contracts import ALLOWED_LABELS

        if ALLOWED_LABELS not in self.task_.offered_capabilities(self.task_.get_params()):
            raise ConfigError(f"allowed= restricts the labels of a sequence's tokens; task "
                              f"{self.task_.name!r} has none to restrict")
        return allowed_label_ids(allowed, list(self.task_.labels_), n_examples)

    def decision_function(self, X) -> np.ndarray:
        """Binary tasks: f(x) = max_h w . Phi(x, h) for raw ``X`` (> 0: ``classes_[1]``)."""
        _, Xf = self._featurise(X)
        if not hasattr(self.learner_, "decision_function"):
            raise AttributeError(f"{type(self.learner_).__name__} has no decision_function")
        return self.learner_.decision_function(Xf)

    def predict_marginals(self, X, *, allowed=None) -> list:
        """Per-token label probabilities for raw ``X``, in sklearn-crfsuite's shape: one list
        per sentence of one ``{label: probability}`` dict per token (every label of the task;
        each dict sums to one).  Needs a learner with marginals (``learner="crf"``).
        ``allowed`` as in :meth:`predict`: the probabilities given the restriction."""
        _, Xf = self._featurise(X)
        if not hasattr(self.learner_, "predict_marginals"):
            raise AttributeError(
                f"{type(self.learner_).__name__} has no predict_marginals: it learns scores, "
                "not probabilities. Train with learner='crf' for per-token probabilities")
        if allowed is None:
            marginals = self.learner_.predict_marginals(Xf)
        else:
            marginals = self.learner_.predict_marginals(
                Xf, allowed=self._allowed_ids(allowed, len(Xf)))
        L = self.task_.n_labels
        names = [str(v) for v in self.task_.decode_targets([np.arange(L)])[0]]
        return [[dict(zip(names, row.tolist())) for row in m] for m in marginals]

    def score(self, X, y) -> float:
        """The task's main metric (``task.score_metric``: tagging accuracy, chunk F1, UAS,
        binary accuracy) of ``predict(X)`` against raw ``y``; higher is better.

        The metric is computed from the raw gold labels, so a label the model never saw
        counts as what it is: a tag no prediction matches, a chunk of its own type (chunk
        F1 equals conlleval's), a class always missed.  A binary task's ``y`` must hold
        its two classes."""
        check_is_fitted(self)
        dataset, Xf = self._featurise(X, self._encode_known(y))
        if self._mode(type(self.task_)) == "binary":
            return float(self.learner_.score(Xf, self.task_.encode_targets(dataset.targets)))
        metrics = self.task_.evaluate_raw(dataset.targets, self.learner_.predict(Xf))
        return float(metrics[self.task_.score_metric])

    # --- persistence ---------------------------------------------------------------------
    def save(self, path) -> None:
        """Write the fitted model to ``path``: the command line's model file (JSON metadata
        plus ``.npz`` arrays, never pickle), written atomically.  ``latentstruct.load``
        and ``latentstruct predict --model PATH`` read it."""
        from ..data.atomic import check_output_path

        check_is_fitted(self)
        check_output_path(path, what="the model path")
        classes = self.classes_ if self._mode(type(self.task_)) else None
        extra = {"estimator": type(self).__name__,
                 "classes": None if classes is None else [json_scalar(c) for c in classes],
                 "seed": self.learner_.get_params(deep=False).get("random_state")}
        save_trained(path, self.task_, self.learner_, extra=extra)
