"""The structure contract: everything a learner sees of a task.

A learner never imports a task, and from ``tasks/`` it imports this module only
(``tests/test_layering.py`` checks both, and that every member a learner touches on its task
is one listed here).  What a task can do for a learner is written twice over in one place:

* as :class:`typing.Protocol` classes, one per *capability*, whose members are the methods
  and attributes a learner may call (:class:`Structure` holds what every task has);
* as the table :data:`CAPABILITIES` (name, the methods a task must implement to offer it,
  its meaning), which is *generated* from the protocols by :func:`capability_protocol`, so
  the two cannot drift.

A task declares the capabilities it offers in its class attribute ``capabilities``; each
learner declares the ones it needs (``required_capabilities``).  ``check_compatible``
(``learners.base``) checks a (task, learner) pair from their classes and hyperparameters
alone, so the command line refuses a mismatch before any data is read.
:func:`missing_methods` checks that a task class really implements (overrides) every method
of every capability it declares; the test suite runs it over every registered task.

The data types of the label-factored capability (:class:`LabelFactoredBatch`,
:func:`gold_labels`) are re-exported here, so that DISTRO needs nothing else from ``tasks/``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, runtime_checkable

import numpy as np

from ..exceptions import ConfigError
from .completion import (CompletedStructure, latent_argmax_decisions,
                         loop_argmax_results, loop_joint_feature_differences,
                         loop_latent_argmax_batch, loop_loss_batch)
from .label_factored import LabelFactoredBatch, gold_labels

__all__ = [
    "Capability",
    "params_from_file",
    "CAPABILITIES",
    "MAX_DECODABLE",
    "LATENT_BINARY",
    "HEURISTIC",
    "SIZED",
    "RANDOM_TIES",
    "MARGINALIZABLE",
    "LABEL_FACTORED",
    "EXPLAINABLE",
    "KBEST",
    "ALLOWED_LABELS",
    "PARTIAL_LABELS",
    "CANDIDATE_LIST",
    "CLASS_POSTERIOR",
    "Structure",
    "MaxDecodable",
    "LatentBinary",
    "Heuristic",
    "Sized",
    "RandomTies",
    "Marginalizable",
    "LabelFactored",
    "Explainable",
    "KBest",
    "AllowedLabels",
    "PartialLabels",
    "CandidateList",
    "ClassPosterior",
    "BatchMarginals",
    "CompiledOnline",
    "CompiledLatentPA",
    "Persistent",
    "Identity",
    "as_structure",
    "structure_members",
    "CompletedStructure",
    "loop_argmax_results",
    "loop_joint_feature_differences",
    "loop_loss_batch",
    "loop_latent_argmax_batch",
    "LabelFactoredBatch",
    "gold_labels",
    "any_of",
    "alternatives",
    "capability",
    "missing_methods",
    "protocol_members",
    "learner_members",
    "LEARNER_PROTOCOLS",
    "is_structure",
    "latent_argmax_decisions",
    "checked_heuristic_weights",
    "describe",
]


@dataclass(frozen=True)
class Identity:
    """Who a structure is, as data (no behaviour): the name messages print, the class that
    defines it (``kind``, for messages that point at code), and the parameters a checkpoint
    records and compares; ``local_params`` name places on the machine (cache folders) that
    may differ between a checkpoint and its resumption."""

    name: str
    params: dict
    local_params: frozenset = frozenset()
    kind: str = ""


@dataclass(frozen=True)
class Capability:
    """One capability: its name, the methods a task must implement to offer it, what it
    means, and the protocol that lists every member a learner may use through it."""

    name: str
    methods: tuple[str, ...]
    meaning: str
    protocol: type | None = None


CAPABILITIES: dict[str, Capability] = {}

#: names typing.Protocol puts on every protocol class (not members of the contract)
_PROTOCOL_NOISE = frozenset({"_is_protocol", "_is_runtime_protocol", "__init__",
                             "__non_callable_proto_members__", "__protocol_attrs__"})


def protocol_members(protocol: type) -> tuple[str, ...]:
    """The members a protocol class itself declares (methods, properties and annotated
    attributes, in the order written), without those of the protocols it extends."""
    own = list(getattr(protocol, "__annotations__", {}))
    own += [k for k in vars(protocol) if not k.startswith("_") and k not in own]
    return tuple(k for k in own if k not in _PROTOCOL_NOISE)


def capability_protocol(name: str, required: tuple[str, ...], meaning: str):
    """Class decorator: register ``name`` in :data:`CAPABILITIES` from a protocol class.

    ``required`` are the members a task must implement itself to offer the capability
    (:func:`missing_methods` checks them); the protocol's other members have defaults in
    the task base classes or are attributes.  A required name the protocol does not
    declare is a ``TypeError`` at import, so the table and the protocols cannot drift."""
    def register(protocol: type) -> type:
        members = protocol_members(protocol)
        unknown = [m for m in required if m not in members]
        if unknown:
            raise TypeError(f"capability {name!r}: {protocol.__name__} does not declare "
                            f"{unknown}; add them to the protocol or drop them from required")
        CAPABILITIES[name] = Capability(name, tuple(required), meaning, protocol)
        protocol.__capability__ = name
        return protocol
    return register


# -------------------------------------------------------------- what every structure has
@runtime_checkable
class Structure(Protocol):
    """The structure as any learner sees it, whatever its capabilities: who it is, what it
    offers, the size of the weight vector, the batch form of the examples, whether its
    decoders maximise, and how predictions are scored.

    A built-in task gives its learners ``task.structure()``, a view that offers these and
    the members of its capabilities' protocols below, delegated to the task, and nothing
    else (no reading, featurising, sampling or saving).  A structure written by hand needs
    only its capabilities' required methods and ``n_features``: :func:`as_structure`
    completes the rest."""

    #: name and parameters (messages, checkpoints)
    identity: Identity
    #: the capability names this structure offers
    capabilities: frozenset

    @property
    def n_features(self) -> int:
        """Length of Phi(x, y): the number of weights."""

    def as_batch(self, X) -> Any:
        """``X`` in the structure's batch representation (learners call it first in ``fit``)."""

    def subset(self, X, indices) -> Any:
        """The examples ``X[i] for i in indices``, in the batch representation."""

    def argmax_is_maximum(self) -> bool:
        """False for a decoder that is a fixed procedure (decode-then-vote): learners then
        skip the exactness check and treat an objective increase as a warning."""

    def score(self, Y_true, Y_pred) -> float:
        """How good predictions are, higher is better (a learner's ``score``): a task's
        main metric, or minus the mean loss."""


# ------------------------------------------------------------------------- capabilities
@capability_protocol(
    "max-decodable", ("argmax", "joint_feature", "loss"),
    "argmax (plain and loss-augmented), joint_feature and loss of a labelled structure")
class MaxDecodable(Structure, Protocol):
    """Labelled structures: (loss-augmented) argmax, Phi(x, y) and Delta(y, y'); the batch
    forms default to loops over them (``tasks.base.StructuredTask``)."""

    def argmax(self, x, w, y_true=None, *, random_state=None) -> Any:
        """``DecodeResult`` of the best structure; loss-augmented when ``y_true`` is given.

        ``x`` is one featurised example, whatever ``featurize`` makes of a record: any
        picklable object (process workers receive it pickled); the returned structure is
        any picklable value that ``joint_feature`` and ``loss`` accept."""

    def argmax_results(self, X, w, Y=None, *, random_state=None) -> list:
        """``argmax`` of every example (with its status)."""

    def argmax_batch(self, X, w, Y=None, *, random_state=None) -> list:
        """The structures of ``argmax_results``."""

    def joint_feature(self, x, y) -> Any:
        """Phi(x, y) as a ``SparseVector``, for every legal structure ``y`` of ``x`` (the
        gold one, any the argmax returns, and each one ``check_task``'s enumeration yields),
        indices below ``n_features``."""

    def joint_feature_difference(self, x, y_a, y_b) -> Any:
        """Phi(x, y_a) - Phi(x, y_b), coalesced."""

    def joint_feature_differences(self, X, Y_a, Y_b) -> Any:
        """Every example's difference, as the rows of one ``SparseRows``."""

    def loss(self, y_true, y_pred) -> float:
        """Delta(y_true, y_pred) >= 0, zero when equal."""

    def loss_batch(self, Y_true, Y_pred) -> np.ndarray:
        """``loss`` of every pair as float64."""


@capability_protocol(
    "latent-binary", ("latent_argmax", "latent_feature"),
    "latent completion argmax_h w.Phi(x, h) and Phi(x, h) for a binary decision")
class LatentBinary(Structure, Protocol):
    """A binary decision over a hidden structure: f(x) = max_h w . Phi(x, h)."""

    def latent_argmax(self, x, w, *, random_state=None) -> Any:
        """``DecodeResult`` of the best legal h, its score w . Phi(x, h).

        ``x`` is one featurised example: any picklable object (process workers receive it
        pickled).  h is any picklable value ``latent_feature`` accepts, best a numpy array
        (or a value numpy can hold): LCLR keys its caches on its bytes."""

    def latent_argmax_batch(self, X, w, *, random_state=None) -> list:
        """``latent_argmax`` of every example."""

    def latent_feature(self, x, h) -> Any:
        """Phi(x, h) as a ``SparseVector`` (bias feature included), for every legal h of
        ``x``, not only the argmax's: learners call it on cached and heuristic structures,
        and ``check_task`` on each one its enumeration yields."""

    def decision_batch(self, X, w) -> np.ndarray:
        """f(x) of every example (default :func:`latent_argmax_decisions`)."""


@capability_protocol(
    "heuristic", ("heuristic_weights",),
    "weights of a heuristic structure (the two-stage baseline, LCLR's initialisation)")
class Heuristic(Protocol):
    """Fixed weights whose latent argmax is a two-stage system's heuristic structure."""

    def heuristic_weights(self) -> np.ndarray:
        """float64 (n_features,)."""


@capability_protocol("sized", ("example_size",),
                     "the size kappa(x) of an example (tokens)")
class Sized(Protocol):
    """The size kappa(x) of an example (J-LIS's normaliser, the perceptron's step)."""

    def example_size(self, x) -> int:
        """Tokens of ``x``."""


@capability_protocol(
    "random-ties", (),
    "decoders that break ties uniformly at random among all optima when given random_state")
class RandomTies(Protocol):
    """A promise, no member: ``argmax(..., random_state=rng)`` draws uniformly among ties."""


@capability_protocol(
    "marginalizable", ("log_partition", "marginals", "expected_feature"),
    "log-partition, node/edge marginals and expected features over structures")
class Marginalizable(Protocol):
    """Log-partition and marginals over the same parts as the argmax (log-linear learners)."""

    #: the labels per position (the shape of the node marginals)
    n_labels: int

    def log_partition(self, x, w) -> float:
        """log Z(x) = log sum_y exp(w . Phi(x, y))."""

    def marginals(self, x, w) -> Any:
        """Node (and edge) marginals; ``.node`` is (T, n_labels)."""

    def expected_feature(self, x, w) -> np.ndarray:
        """E_y[Phi(x, y)] as a dense float64 (n_features,)."""


@capability_protocol(
    "label-factored",
    ("label_factored_parts", "part_scores_from_label_matrix", "argmax_from_part_scores",
     "label_counts", "label_factored_batch", "argmax_from_part_scores_batch"),
    "per-part input feature rows and labels; part scores from a label matrix")
class LabelFactored(Protocol):
    """Per-part label lists and input rows; part scores from a label matrix (DISTRO)."""

    n_labels: int

    def label_factored_parts(self, x) -> Any: ...

    def part_scores_from_label_matrix(self, x, *args) -> Any: ...

    def argmax_from_part_scores(self, x, *args, **kwargs) -> Any: ...

    def label_counts(self, Y) -> np.ndarray: ...

    def label_factored_batch(self, X) -> LabelFactoredBatch:
        """Every example of ``X`` as stacked input rows (``LabelFactoredBatch``)."""

    def argmax_from_part_scores_batch(self, offsets, unary, transition, start, end,
                                      Y=None) -> Any:
        """Exact (Hamming-loss-augmented with ``Y``) decoding from part scores."""


@capability_protocol(
    "explainable", ("explain",),
    "describe the structure a model picks for one example (latentstruct explain)")
class Explainable(Protocol):
    """Used by the command line and plotting, never by a learner.  Encoding the raw input
    pair to explain is the task's (``encode_pair``: featurising, which may need a parser
    that a structure does not hold); ``latentstruct explain`` checks that it has one."""

    def explain(self, *args, **kwargs) -> Any: ...


@capability_protocol(
    "candidate-list",
    ("candidate_log_partitions", "candidate_expected_features", "candidate_max_product"),
    "per-candidate log Z_j = log sum_h exp(w.Phi(t_j, h)), sum_j c_j E_{h|t_j}[Phi(t_j, h)] "
    "for given coefficients c, and the max-product hidden assignment of each candidate")
class CandidateList(Protocol):
    """Candidate structures per example, hidden variables summed out (Koo & Collins 2005,
    §3.2).  Encoded targets expose ``oracle``, the candidates to be ranked first."""

    def candidate_log_partitions(self, X, w) -> Any: ...

    def candidate_expected_features(self, X, w, coefficients) -> np.ndarray: ...

    def candidate_max_product(self, X, w) -> Any: ...


@capability_protocol(
    "class-posterior", ("class_log_partitions", "log_loss_batch"),
    "per-class log Z(x, y) = log sum_h exp(w.Phi(x, y, h)) and the corpus log-loss with its "
    "gradient (a class decided by marginalising a hidden structure)")
class ClassPosterior(Protocol):
    """A class decided over a hidden structure (a hidden-state CRF)."""

    def class_log_partitions(self, X, w) -> np.ndarray:
        """(n_examples, n_classes) log Z(x, y)."""

    def log_loss_batch(self, X, Y, w) -> tuple[float, np.ndarray]:
        """Sum of log Z - log Z(gold) and its gradient."""


@capability_protocol("k-best", ("kbest",),
                     "the k best structures and their scores (latentstruct kbest, "
                     "predict_nbest)")
class KBest(Protocol):
    """The k best structures of one example, best first (a learner's ``predict_nbest``;
    ``latentstruct kbest``): ``kbest(x, w, k)``, a list of ``DecodeResult`` (or of tuples
    whose first item is the structure and last its score, a parser's ``(heads, deprels,
    score)``)."""

    def kbest(self, *args, **kwargs) -> Any: ...


@capability_protocol(
    "allowed-labels", ("part_scores",),
    "decoders restricted to the labels each part may take: argmax_batch, kbest, marginals "
    "and log_partition with allowed=... (predict(X, allowed=...))")
class AllowedLabels(Protocol):
    """Labels a user allows (or forces) per part at prediction time, kept exactly by every
    decoder the structure offers: its ``argmax``, ``argmax_batch``, ``kbest``,
    ``marginals`` and ``log_partition`` take ``allowed=`` (one entry per part: None for
    any label, or the label ids it may take), and ``part_scores`` gives the restricted
    scores.  A restriction that leaves no structure is an ``InputError``."""

    def part_scores(self, x, w, *, allowed=None) -> Any: ...


@capability_protocol(
    "partial-labels", ("unknown_parts", "complete_batch"),
    "targets that leave parts unknown (-1): the loss counts the known parts only, and "
    "complete_batch fills the unknown ones with the best structure that keeps the known")
class PartialLabels(Protocol):
    """Learning from partially labelled targets: a probabilistic learner sums over the
    unknown parts (the CRF's likelihood), a max-margin or online one completes them with
    its current weights as latent variables (``complete_batch``)."""

    def unknown_parts(self, Y) -> int:
        """How many parts of the targets ``Y`` are unknown."""

    def complete_batch(self, X, w, Y) -> list:
        """``Y`` with the unknown parts filled in under ``w`` (known parts kept)."""


#: the capability names, as tasks and learners write them
MAX_DECODABLE = MaxDecodable.__capability__
LATENT_BINARY = LatentBinary.__capability__
HEURISTIC = Heuristic.__capability__
SIZED = Sized.__capability__
RANDOM_TIES = RandomTies.__capability__
MARGINALIZABLE = Marginalizable.__capability__
LABEL_FACTORED = LabelFactored.__capability__
EXPLAINABLE = Explainable.__capability__
CANDIDATE_LIST = CandidateList.__capability__
CLASS_POSTERIOR = ClassPosterior.__capability__
KBEST = KBest.__capability__
ALLOWED_LABELS = AllowedLabels.__capability__
PARTIAL_LABELS = PartialLabels.__capability__


# ----------------------------------------------------------- outside any one capability
class BatchMarginals(Protocol):
    """Compiled batch forms a task *may* add to marginalizable or class-posterior ones;
    the CRF uses them where present (``getattr(task, name, None)``), else loops over the
    capability's own methods, so no capability requires them."""

    def marginals_batch(self, X, w) -> list: ...

    def log_loss_batch(self, X, Y, w, out=None) -> tuple[float, np.ndarray]: ...

    def observed_feature_support(self, X, Y, **choice) -> np.ndarray: ...

    def log_loss_sgd(self, X, Y, support=None) -> Any: ...

    def log_loss_trained(self, X, Y, support) -> Any: ...


class CompiledOnline(Protocol):
    """A compiled online pass a max-decodable task *may* add: the online learners (the
    perceptron, ``pa``, ``arow``) run their epochs through it where present
    (``getattr(task, "online_batch", None)``), handing it their update rule (a code of
    ``solvers.online_rules.RULES``), and loop over
    ``argmax`` and ``joint_feature_difference`` in Python otherwise.

    ``online_batch(X, Y)`` prepares examples once (None: not for these, e.g. partial
    labels); ``online_pass(batch, w, order, rule, params, u, extra, support, t, check)``
    visits them in ``order``: the plain argmax under the current ``w`` and, after a mistake,
    ``apply_rule(rule, w, u, extra, idx, val, violation, errors, t, params)`` on ``Phi(x, y) - Phi(x,
    y_hat)`` restricted to the byte mask ``support`` (empty: every weight); it returns the
    pass's statistics (``cost``, ``errors``, ``rate``, ``n_updates``, ``steps``, and with
    ``check`` the first example whose decoder score disagrees with ``w . Phi``)."""

    def online_batch(self, X, Y) -> Any: ...

    def online_pass(self, batch, w, order, rule, params, u, extra, support, t,
                    check) -> dict: ...


class CompiledLatentPA(Protocol):
    """A compiled LatentPA pass a latent-binary structure *may* add: ``LatentPA`` runs its
    passes through it where present (``getattr(structure, "latent_pa_batch", None)``) and
    no per-step ``callback`` is given, and loops over ``latent_argmax`` and
    ``latent_feature`` in Python otherwise.

    ``latent_pa_batch(X, y, known)`` prepares examples once (None: not for these, e.g. a
    decoder that is not compiled, or one that may not be exact: the pass's decodes are
    all exact), remembering ``known`` ({example: Phi(x, h)} of the
    structure each was last decoded to); ``latent_pa_pass(batch, w, u, order, pa_type, C,
    max_rounds, t, check, rtol)`` visits them in ``order`` with the steps of Algorithm 1
    (the argmax, ``tau`` of ``solvers.online_rules.pa_tau``, a negative re-decoded until it
    scores below 0 or ``max_rounds`` rounds ran; ``u`` the averaging accumulator, empty
    without averaging), checking every decode against ``w . Phi`` and the known structure,
    and returns the pass's statistics (steps, updates, capped visits, first-decode
    accuracy and loss, decodes, failed checks and the first: ``first_kind`` 1 for a score
    that is not ``w . Phi``, 2 for an argmax below the known structure, with its example
    and the two scores compared); ``latent_pa_known(batch)`` gives the ``known`` features
    back (a checkpoint records them)."""

    def latent_pa_batch(self, X, y, known=None) -> Any: ...

    def latent_pa_pass(self, batch, w, u, order, pa_type, C, max_rounds, t, check,
                       rtol) -> dict: ...

    def latent_pa_known(self, batch) -> dict: ...


class Persistent(Protocol):
    """What saving and loading a trained model reads of its task (``learners.persistence``
    and ``learners.checkpoint``): its fitted state and the parameters a file may not set
    (:func:`params_from_file`, with the class's ``param_defaults()``)."""

    #: parameters naming places on this machine (never taken from a file)
    local_params: ClassVar[frozenset]

    def get_state(self) -> tuple[dict, dict]: ...

    @classmethod
    def from_state(cls, params: dict, state: dict, arrays: dict) -> Any: ...


def params_from_file(task_cls, params: dict) -> dict:
    """The parameters to rebuild a task of ``task_cls`` from a model file's ``params``.

    A model file is data, never configuration: each of the class's ``local_params`` (a
    path, a cache folder) takes its default here, never the file's value, so loading a file
    cannot make the program read, create or import what the file names.  The user may
    still set an evaluation-time one (``--option``) after loading.
    """
    if not isinstance(params, dict):
        raise TypeError(f"task parameters must be a JSON object, got {type(params).__name__}")
    defaults = task_cls.param_defaults()
    return {k: (defaults[k] if k in task_cls.local_params and k in defaults else v)
            for k, v in params.items()}


#: the protocols whose members a learner may touch (explainable serves the command line,
#: never a learner; ``Persistent`` is the pipeline's, which saves a pair)
LEARNER_PROTOCOLS = (Structure, MaxDecodable, LatentBinary, Heuristic, Sized, RandomTies,
                     Marginalizable, LabelFactored, CandidateList, ClassPosterior, KBest,
                     AllowedLabels, PartialLabels, BatchMarginals, CompiledOnline,
                     CompiledLatentPA)


def learner_members() -> dict[str, str]:
    """Every member a learner may touch on its structure -> the protocol that lists it."""
    out: dict[str, str] = {}
    for proto in LEARNER_PROTOCOLS:
        for m in protocol_members(proto):
            out.setdefault(m, proto.__name__)
    return out


def structure_members(capabilities, has=lambda name: False) -> frozenset:
    """The members a structure offering ``capabilities`` shows a learner: the base's, its
    capabilities' protocols', and the optional batch forms ``has(name)`` says exist.  A
    latent-binary structure shows the compiled LatentPA pass's members whether or not it
    has them: ``LatentPA`` looks them up on any (with a default), and one that is absent
    raises ``AttributeError`` from the structure itself."""
    members = set(protocol_members(Structure))
    for name in capabilities:
        members |= set(protocol_members(capability(name).protocol))
    members |= {m for m in protocol_members(BatchMarginals) if has(m)}
    members |= {m for m in protocol_members(CompiledOnline) if has(m)}
    members |= {m for m in protocol_members(CompiledLatentPA)
                if has(m) or LATENT_BINARY in capabilities}
    return frozenset(members)


def is_structure(obj) -> bool:
    """Whether ``obj`` offers every member of :class:`Structure` (looked up on the class
    where it is an attribute there, so properties are not evaluated)."""
    return all(hasattr(type(obj), m) or hasattr(obj, m) for m in protocol_members(Structure))


def as_structure(obj) -> Any:
    """The structure a learner trains, from what it was given:

    * a task (it has ``structure()`` and ``offered_capabilities``): its narrow view,
      ``task.structure()`` (the task must be fitted);
    * an object that offers every member of :class:`Structure`: itself;
    * any other object: a :class:`CompletedStructure`, which adds the base members and the
      batch forms the object lacks (it needs ``n_features`` and the required methods of
      the capabilities it offers, say ``argmax``, ``joint_feature`` and ``loss``).
    """
    if obj is None:
        raise ConfigError("a learner needs a structure (or a fitted task) to train; got None")
    if is_structure(obj):
        return obj
    make = getattr(obj, "structure", None)
    if callable(make) and hasattr(obj, "offered_capabilities") and not isinstance(obj, type):
        return make()
    declared = getattr(obj, "capabilities", None)
    caps = (frozenset(declared) if declared is not None
            else frozenset(c.name for c in CAPABILITIES.values()
                           if c.methods and all(hasattr(obj, m) for m in c.methods)))
    get_params = getattr(obj, "get_params", None)
    identity = Identity(str(getattr(obj, "name", "") or type(obj).__name__),
                        dict(get_params()) if callable(get_params) else {},
                        kind=type(obj).__name__)
    return CompletedStructure(obj, caps, identity)


def checked_heuristic_weights(structure) -> np.ndarray:
    """``structure.heuristic_weights()`` as float64, checked to be a vector of
    ``n_features`` entries: where a learner first takes them (``TwoStage``, so the
    two-stage baseline and LCLR's default initialisation), a wrong length is a
    ``ConfigError`` naming the method, the class that defines it and both lengths, not a
    matrix-product error deep in a decoder."""
    w = structure.heuristic_weights()
    arr = np.asarray(w, dtype=np.float64) if isinstance(w, (np.ndarray, list, tuple)) else None
    n = structure.n_features
    identity = getattr(structure, "identity", None)
    kind = (identity.kind if identity is not None and identity.kind
            else type(structure).__name__)
    if arr is None or arr.shape != (n,):
        got = (f"an array of shape {arr.shape}" + (f" ({arr.shape[0]} entries)" if arr.ndim == 1
                                                   else "")
               if arr is not None else f"a {type(w).__name__}")
        raise ConfigError(
            f"{kind}.heuristic_weights() returned {got}; expected a float vector "
            f"of length n_features = {n} (one weight per feature of the task's feature map). "
            "Fix the task's heuristic_weights (latentstruct.testing.check_task checks it)")
    return arr


def any_of(*names: str) -> str:
    """A requirement met by any one of the capabilities ``names`` (e.g. a learner that
    predicts either by an argmax or by class posteriors)."""
    for n in names:
        capability(n)
    return "|".join(names)


def alternatives(requirement: str) -> tuple[str, ...]:
    """The capabilities of a requirement: one name, or those joined by :func:`any_of`."""
    return tuple(requirement.split("|"))


def capability(name: str) -> Capability:
    try:
        return CAPABILITIES[name]
    except KeyError:
        raise ValueError(
            f"unknown capability {name!r}; known: {', '.join(sorted(CAPABILITIES))}"
        ) from None
def missing_methods(task_cls, base_classes: tuple[type, ...]) -> dict[str, list[str]]:
    """Methods of declared capabilities that ``task_cls`` does not implement.

    A composed task (one with a ``structure_class``, such as the sequence tasks' chain)
    implements them in that class.  A method counts as implemented when some class in the
    implementing class's MRO other than the abstract ``base_classes`` and their own bases
    (whose methods only raise or loop over the required ones) defines it.  Returns
    {capability: [missing method, ...]} (empty when the declaration is honest).
    """
    implementing = getattr(task_cls, "structure_class", None) or task_cls
    abstract = {k for base in base_classes for k in base.__mro__}
    out: dict[str, list[str]] = {}
    for cap_name in sorted(getattr(task_cls, "capabilities", ())):
        cap = capability(cap_name)
        missing = []
        for method in cap.methods:
            owners = [k for k in implementing.__mro__ if method in vars(k)]
            if not owners or all(k in abstract for k in owners):
                missing.append(method)
        if missing:
            out[cap_name] = missing
    return out


def describe(names) -> str:
    """``name (meaning)`` for each capability (a requirement with alternatives: ``a (...) or
    b (...)``), semicolon-separated, for error messages."""
    return "; ".join(" or ".join(f"{n} ({capability(n).meaning})" for n in alternatives(req))
                     for req in sorted(names))
