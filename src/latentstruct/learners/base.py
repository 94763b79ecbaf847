"""What every linear structured learner shares: validation, prediction, persistence,
and the registry that checks a (task, learner) pair.

Learners follow scikit-learn's estimator contract (hyperparameters stored unchanged in
``__init__``, validated in ``fit``, learned attributes end in ``_``, ``score`` returns a
float, ``sklearn.base.clone`` works).  They never import a concrete task; each declares the
task capabilities it needs (``required_capabilities``, names from ``tasks.contracts``) and
talks to its ``task`` only through them.
"""

from __future__ import annotations

import functools

import numpy as np
from sklearn.base import BaseEstimator

from ..registry import Registry, learner_modules
from ..exceptions import ConfigError, InferenceError, InputError, check_is_fitted
from ..inference.constraints import check_entries
from ..parallel import fit_session, parallel_chunks, rows, shared
from ..tasks.contracts import (
    ALLOWED_LABELS,
    KBEST,
    PARTIAL_LABELS,
    Structure,
    alternatives,
    as_structure,
    capability,
)
from ..params import CheckedParams, check_coef_init, validate_params

__all__ = [
    "LinearStructuredLearner",
    "check_coef_init",
    "LEARNERS",
    "register_learner",
    "get_learner_class",
    "check_compatible",
    "valid_learners",
]


_EVERY_LEARNER_USES = frozenset({PARTIAL_LABELS, KBEST, ALLOWED_LABELS})


class LinearStructuredLearner(CheckedParams, BaseEstimator):
    """Base of learners whose model is one weight vector ``coef_`` over the task's features."""

    #: task capabilities every instance needs (see ``required_capabilities``)
    requires: frozenset = frozenset()
    #: capabilities used when the structure offers them, never needed (the perceptron's
    #: step scaled by the example's size when the structure is sized)
    uses_if_offered: frozenset = frozenset()
    #: hyperparameter -> list of what it may be (``latentstruct.params``); checked by
    #: ``check_params`` on entering ``fit`` and ``partial_fit`` (``params.fit_context``:
    #: once, and not inside an estimator's fit that checked already) and by
    #: ``check_compatible``
    _parameter_constraints: dict = {}
    #: hyperparameters that may change on a trained model (``evaluate``/``predict`` options)
    evaluation_params: frozenset = frozenset({"n_jobs", "progress"})
    #: hyperparameters that may differ when a fit resumes from a checkpoint (they never
    #: change what is learned)
    resume_may_change: frozenset = frozenset({"n_jobs", "progress", "verbose"})

    #: how the learner takes targets with unknown parts (partial labels, capability
    #: *partial-labels*): "marginalised" (summed over: the CRF), "completed" (filled in
    #: with the current weights as latent variables: the structural SVM, the perceptron,
    #: the online steps), or None (refused before training, naming the learners that do)
    partial_labels: str | None = None

    def __init_subclass__(cls, **kwargs):
        # Each fit is one parallel session: one worker pool for all its passes, and data it
        # shares (the task) reaches each worker once (latentstruct.parallel.fit_session).
        # partial_fit too: each call is one session.  Around it, CheckedParams checks the
        # hyperparameters on entry (params.fit_context).
        for name in ("fit", "partial_fit"):
            if name in cls.__dict__:
                setattr(cls, name, _in_fit_session(_refusing_partial_labels(cls.__dict__[name])))
        # every learner uses these where the structure offers them: partial labels (to take
        # or refuse targets with unknown parts), and the k-best and allowed-labels decoders
        # (predict_nbest, predict(X, allowed=...))
        cls.uses_if_offered = frozenset(cls.uses_if_offered) | _EVERY_LEARNER_USES
        super().__init_subclass__(**kwargs)

    def _unknown_parts(self, structure, Y) -> bool:
        """Whether the targets ``Y`` leave parts unknown (partial labels)."""
        return PARTIAL_LABELS in structure.capabilities and structure.unknown_parts(Y) > 0

    @classmethod
    def required_capabilities(cls, params: dict | None = None) -> dict[str, str]:
        """Capabilities a learner of this class with hyperparameters ``params`` needs from its
        task: {capability: why} (the reason is empty when the learner always needs it)."""
        return {c: "" for c in cls.requires}

    @classmethod
    def validate_params(cls, params: dict, *, n_features: int | None = None) -> None:
        """Raise ``ConfigError`` (scikit-learn's wording) for the first hyperparameter in
        ``params`` that ``_parameter_constraints`` does not allow; needs no task or data."""
        validate_params(cls.__name__, cls._parameter_constraints, params, n_features=n_features,
                        defaults=cls().get_params(deep=False))

    def _check_param_values(self) -> None:
        """``validate_params`` on this instance's hyperparameters (``check_params``, on
        entering ``fit``)."""
        n = None
        if "coef_init" in self._parameter_constraints and self.structure is not None:
            n = self.coef_size(self._structure())
        type(self).validate_params(self.get_params(deep=False), n_features=n)

    def _structure(self) -> Structure:
        """The structure this learner trains: ``as_structure(self.structure)`` (a task gives
        its narrow view, ``task.structure()``; a hand-written structure is completed)."""
        return as_structure(self.structure)

    def _check_structure(self) -> Structure:
        """The structure, once it is known to offer every capability this learner (with its
        hyperparameters) needs."""
        structure = self._structure()
        needed = type(self).required_capabilities(self.get_params(deep=False))
        unmet = {c: why for c, why in needed.items()
                 if not set(alternatives(c)) & set(structure.capabilities)}
        if unmet:
            needs = "; ".join(
                " or ".join(f"{a} ({capability(a).meaning})" for a in alternatives(c))
                + (f", needed because {why}" if why else "") for c, why in sorted(unmet.items()))
            raise ConfigError(f"learner {_learner_name(type(self))!r} cannot train structure "
                              f"{structure.identity.name!r}, which lacks: {needs}")
        return structure

    #: whether ``fit`` also takes binary examples (X_binary, y_binary), as J-LIS does
    uses_binary_examples = False

    def coef_size(self, structure) -> int:
        """Length of ``coef_`` for ``structure`` (checked when a model file is loaded)."""
        return structure.n_features

    def __sklearn_is_fitted__(self) -> bool:
        """Whether ``coef_`` is learned (the query ``exceptions.check_is_fitted`` asks)."""
        return getattr(self, "coef_", None) is not None

    def _decode(self, X, w, Y=None, *, random_state=None, data=None) -> list:
        """(Loss-augmented when Y is given) argmax of every example, in parallel chunks.

        ``data``: a ``parallel.shared(task=..., X=..., Y=...)`` block a fit opened over this
        ``X`` (and ``Y``), so that they reach workers once per fit; without it the task is
        sent once per call and each chunk carries its own rows of ``X`` and ``Y``."""
        structure = self._structure()
        X = structure.as_batch(X) if data is None else X
        n_jobs = getattr(self, "n_jobs", 1)
        if data is not None:
            ys = None if Y is None else data["Y"]
            return parallel_chunks(_decode_chunk, len(X), n_jobs,
                                   args=(data["structure"], data["X"], ys, w, random_state))
        with shared(structure=structure) as block:
            ys = None if Y is None else rows(Y)
            return parallel_chunks(_decode_chunk, len(X), n_jobs,
                                   args=(block["structure"], rows(X), ys, w, random_state))

    def structure_weights(self) -> np.ndarray:
        """The weights ``w`` that score a structure as ``w·Φ(x, y)``, what every decoder of
        the structure takes: ``coef_`` (J-LIS drops its binary bias)."""
        check_is_fitted(self)
        return self.coef_

    def predict(self, X, *, allowed=None) -> list:
        """Best structure of every example under :meth:`structure_weights`.

        ``allowed``: None, or one entry per example restricting the labels of its parts
        (a sequence's: None, or one entry per token, each None for any label or the label
        ids the token may take, one id forcing it), for a structure that offers it
        (capability *allowed-labels*); every prediction then keeps it, exactly."""
        check_is_fitted(self)
        if allowed is None:
            return self._decode(X, self.structure_weights())
        structure = self._offering(ALLOWED_LABELS, "predict with allowed labels")
        return structure.argmax_batch(structure.as_batch(X), self.structure_weights(),
                                      allowed=allowed)

    def predict_nbest(self, X, k: int, *, allowed=None) -> list[list[tuple]]:
        """The ``k`` best structures of every example, best first: per example a list of up
        to ``k`` ``(structure, score, probability)`` tuples, ``score`` being ``w·Φ(x, y)``
        under :meth:`structure_weights`.  ``probability`` is ``p(y | x)`` for a
        probabilistic learner (the CRF; with ``allowed``, conditioned on the restriction)
        and None otherwise.  Exact k-best decoding (capability *k-best*): the first is
        :meth:`predict`'s, and fewer than ``k`` come back when fewer structures exist.
        ``allowed`` as in :meth:`predict`."""
        check_is_fitted(self)
        if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)) or k < 1:
            raise ConfigError(f"k must be an integer >= 1 (the number of structures per "
                              f"example), got {k!r}")
        structure = self._offering(KBEST, "predict the n best structures")
        if allowed is not None:
            self._offering(ALLOWED_LABELS, "predict with allowed labels")
        X = structure.as_batch(X)
        if allowed is not None:
            allowed = check_entries(allowed, len(X), "example", "None, or the example's "
                                                               "allowed labels")
        w = self.structure_weights()
        out = []
        for i in range(len(X)):
            restriction = None if allowed is None else allowed[i]
            try:
                results = structure.kbest(X[i], w, int(k), **(
                    {} if restriction is None else {"allowed": restriction}))
            except InputError as exc:
                raise InputError(f"example {i}: {exc.message}") from None
            # a DecodeResult, or a parser's (heads, deprels, score)
            pairs = [(r.structure, float(r.score)) if hasattr(r, "structure")
                     else (r[0], float(r[-1])) for r in results]
            probs = self._nbest_probabilities(structure, X[i], [s for _, s in pairs],
                                              restriction)
            out.append([(y, s, p) for (y, s), p in zip(pairs, probs)])
        return out

    def _nbest_probabilities(self, structure, x, scores, allowed) -> list:
        """The probability of each structure of the n-best list of ``x`` from its
        ``scores``; None each: not a probabilistic learner."""
        return [None] * len(scores)

    def _offering(self, capability_name: str, what: str) -> Structure:
        """The structure, once it offers ``capability_name`` (which ``what`` needs)."""
        structure = self._structure()
        if capability_name not in structure.capabilities:
            raise ConfigError(f"cannot {what}: structure {structure.identity.name!r} does not "
                              f"offer {capability_name} ({capability(capability_name).meaning})")
        return structure

    def score(self, X, Y) -> float:
        """The structure's ``score`` of ``predict(X)`` against ``Y`` (a task's main metric;
        higher is better), as scikit-learn's model selection expects."""
        return float(self._structure().score(list(Y), self.predict(X)))

    def _learned_state(self) -> tuple[dict, dict]:
        """JSON-able attributes and arrays that ``_restore`` needs (for model files)."""
        check_is_fitted(self)
        meta = {
            "n_iter_": int(self.n_iter_),
            "objective_curve_": [float(v) for v in self.objective_curve_],
        }
        return meta, {"coef_": self.coef_}

    def _restore(self, meta: dict, arrays: dict) -> None:
        self.coef_ = np.asarray(arrays["coef_"], dtype=np.float64)
        self.n_iter_ = int(meta.get("n_iter_", 0))
        self.objective_curve_ = list(meta.get("objective_curve_", []))


def _refusing_partial_labels(fit):
    """``fit`` (or ``partial_fit``) that refuses targets with unknown parts when the learner
    takes none (``partial_labels`` None), before any training."""
    @functools.wraps(fit)
    def checked(self, X, *args, **kwargs):
        Y = args[0] if args else kwargs.get("Y", kwargs.get("y"))
        if (type(self).partial_labels is None and Y is not None
                and getattr(self, "structure", None) is not None):
            structure = self._structure()
            if PARTIAL_LABELS in structure.capabilities and structure.unknown_parts(Y) > 0:
                raise ConfigError(
                    f"the targets leave {structure.unknown_parts(Y)} tags unknown (partial "
                    f"labels), and learner {_learner_name(type(self))!r} needs every tag; "
                    f"train with one that takes partial labels: {', '.join(partial_learners())}")
        return fit(self, X, *args, **kwargs)
    return checked


def partial_learners() -> list[str]:
    """The registered learners that take partial labels."""
    return sorted(name for name, cls in LEARNERS.items()
                  if getattr(cls, "partial_labels", None) is not None)


def _in_fit_session(fit):
    @functools.wraps(fit)
    def fit_in_session(self, *args, **kwargs):
        with fit_session():
            return fit(self, *args, **kwargs)
    return fit_in_session


def _decode_chunk(a, b, structure, X, Y, w, random_state) -> list:
    """Examples a..b-1 of ``LinearStructuredLearner._decode`` (module level, so that process
    and cluster workers unpickle it by name)."""
    return structure.argmax_batch(X[a:b], w, None if Y is None else Y[a:b], random_state=random_state)


def check_examples(X, Y) -> None:
    """Raise ``ConfigError`` unless ``X`` and ``Y`` have the same number of examples, and at
    least one."""
    if len(X) != len(Y):
        raise ConfigError(f"X has {len(X)} examples but Y has {len(Y)}")
    if len(X) == 0:
        raise ConfigError("cannot fit on zero examples")


def raise_inexact_decoder(kind: str, example: int, value: float) -> None:
    raise InferenceError(
        f"{kind} argmax for example {example} is not exact: the returned structure scores "
        f"{value:.6g} below a structure the decoder must consider (the gold structure). "
        "The task's argmax or its joint_feature disagree; check the task with "
        "latentstruct.testing.check_task(task, examples, enumerate=...), or pass "
        "check_inference=False to skip this check."
    )


#: registered learners by name (``@register_learner``); a name not imported yet is found
#: through :func:`latentstruct.registry.learner_modules`
LEARNERS: Registry = Registry("learner", learner_modules)


def _learner_name(learner_cls) -> str:
    return getattr(learner_cls, "registry_name", learner_cls.__name__)


def _unmet(task_cls, task_params, learner_cls, learner_params) -> dict[str, str]:
    params = {**learner_cls().get_params(deep=False), **(learner_params or {})}
    needed = learner_cls.required_capabilities(params)
    offered = task_cls.offered_capabilities(task_params)
    # a requirement may name alternatives (tasks.contracts.any_of): one of them is enough
    return {c: why for c, why in needed.items() if not set(alternatives(c)) & offered}


def valid_learners(task_cls, task_params: dict | None = None) -> list[str]:
    """Names of the registered learners that a task of ``task_cls`` supports with their
    default hyperparameters."""
    return sorted(name for name, cls in LEARNERS.items()
                  if not _unmet(task_cls, task_params, cls, None))


def check_compatible(task_cls, task_params, learner_cls, learner_params=None) -> None:
    """Raise ``ConfigError`` unless every value in ``task_params`` and ``learner_params`` is
    valid (each class's ``validate_params``, from its ``_parameter_constraints``) and the task offers every capability the learner needs.

    Uses only classes and parameters, so it runs before any data is read; the message
    lists what is missing and the learners that fit the task.
    """
    # bad values first: the capabilities a task offers and a learner needs depend on them
    task_cls.validate_params(task_params or {})
    learner_cls.validate_params(learner_params or {})
    unmet = _unmet(task_cls, task_params, learner_cls, learner_params)
    if not unmet:
        return
    needs = "; ".join(
        " or ".join(f"{a} ({capability(a).meaning})" for a in alternatives(c))
        + (f", needed because {why}" if why else "")
        for c, why in sorted(unmet.items()))
    valid = valid_learners(task_cls, task_params)
    raise ConfigError(
        f"learner {_learner_name(learner_cls)!r} cannot train task {task_cls.name!r}, which "
        f"lacks: {needs}. Learners valid for {task_cls.name!r}: {', '.join(valid) or 'none'}"
    )


def register_learner(name: str):
    def deco(cls):
        LEARNERS[name] = cls
        cls.registry_name = name
        return cls

    return deco


def get_learner_class(name: str):
    try:
        return LEARNERS[name]
    except KeyError:
        raise ConfigError(
            f"unknown learner {name!r}; expected one of: {', '.join(sorted(LEARNERS))}"
        ) from None
