"""Capabilities: what a task offers and what a learner needs.

A task is not one wide base class.  It declares the capabilities it offers in its class
attribute ``capabilities``; each learner declares the ones it needs
(``required_capabilities``).  :func:`check_compatible` checks a (task, learner) pair from
their classes and hyperparameters alone, so the command line refuses a mismatch before any
data is read, and its error lists the learners that fit.

Each capability names the methods that provide it.  :func:`missing_methods` checks that a
task class really implements (overrides) every method of every capability it declares; the
test suite runs it over every registered task, so a declaration cannot drift from the code.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "Capability",
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
    "CANDIDATE_LIST",
    "CLASS_POSTERIOR",
    "any_of",
    "alternatives",
    "capability",
    "missing_methods",
    "describe",
]


@dataclass(frozen=True)
class Capability:
    """One capability: its name, the methods that provide it, and what it means."""

    name: str
    methods: tuple[str, ...]
    meaning: str


CAPABILITIES: dict[str, Capability] = {}


def _define(name: str, methods: tuple[str, ...], meaning: str) -> str:
    CAPABILITIES[name] = Capability(name, methods, meaning)
    return name


#: plain and loss-augmented argmax over structures, Phi(x, y) and the structured loss
MAX_DECODABLE = _define(
    "max-decodable", ("argmax", "joint_feature", "loss"),
    "argmax (plain and loss-augmented), joint_feature and loss of a labelled structure")
#: a binary decision over a hidden structure: latent completion and its feature vector
LATENT_BINARY = _define(
    "latent-binary", ("latent_argmax", "latent_feature"),
    "latent completion argmax_h w.Phi(x, h) and Phi(x, h) for a binary decision")
#: fixed weights whose argmax is a two-stage system's heuristic structure
HEURISTIC = _define(
    "heuristic", ("heuristic_weights",),
    "weights of a heuristic structure (the two-stage baseline, LCLR's initialisation)")
#: the size kappa(x) of an example (J-LIS's normaliser of the binary features)
SIZED = _define("sized", ("example_size",), "the size kappa(x) of an example (tokens)")
#: argmax breaks ties uniformly at random among all optima when given a random_state
RANDOM_TIES = _define(
    "random-ties", (),
    "decoders that break ties uniformly at random among all optima when given random_state")
#: log-partition and marginals over structures (log-linear learners)
MARGINALIZABLE = _define(
    "marginalizable", ("log_partition", "marginals", "expected_feature"),
    "log-partition, node/edge marginals and expected features over structures")
#: per-part label lists and input feature rows; part scores from a label matrix (DISTRO)
LABEL_FACTORED = _define(
    "label-factored",
    ("label_factored_parts", "part_scores_from_label_matrix", "argmax_from_part_scores",
     "label_counts", "label_factored_batch", "argmax_from_part_scores_batch"),
    "per-part input feature rows and labels; part scores from a label matrix")
#: one input pair can be encoded and its chosen structure described as data
EXPLAINABLE = _define(
    "explainable", ("encode_pair", "explain"),
    "encode one input pair and describe the structure a model picks (latentstruct explain)")

#: a list of candidate structures per example, each with hidden variables summed out
#: (Koo & Collins 2005, §3.2): per-candidate log Z_j = log sum_h exp(w.Phi(t_j, h)),
#: sum_j c_j F(t_j) with F(t) = E_{h|t}[Phi(t, h)], and the max-product h* per candidate.
#: Encoded targets expose ``oracle``, the indices of the candidates to be ranked first.
CANDIDATE_LIST = _define(
    "candidate-list",
    ("candidate_log_partitions", "candidate_expected_features", "candidate_max_product"),
    "per-candidate log Z_j = log sum_h exp(w.Phi(t_j, h)), sum_j c_j E_{h|t_j}[Phi(t_j, h)] "
    "for given coefficients c, and the max-product hidden assignment of each candidate")


#: a class decision over a hidden structure (a hidden-state CRF): log Z(x, y) for every class
#: y, the structure h summed out, and the log-loss of a corpus with its gradient
CLASS_POSTERIOR = _define(
    "class-posterior", ("class_log_partitions", "log_loss_batch"),
    "per-class log Z(x, y) = log sum_h exp(w.Phi(x, y, h)) and the corpus log-loss with its "
    "gradient (a class decided by marginalising a hidden structure)")


def any_of(*names: str) -> str:
    """A requirement met by any one of the capabilities ``names`` (e.g. a learner that
    predicts either by an argmax or by class posteriors)."""
    for n in names:
        capability(n)
    return "|".join(names)


def alternatives(requirement: str) -> tuple[str, ...]:
    """The capabilities of a requirement: one name, or those joined by :func:`any_of`."""
    return tuple(requirement.split("|"))


#: the k best structures of an input under weights w, with their scores (reranking lists)
KBEST = _define("k-best", ("kbest",), "the k best structures and their scores (latentstruct kbest)")


def capability(name: str) -> Capability:
    try:
        return CAPABILITIES[name]
    except KeyError:
        raise ValueError(
            f"unknown capability {name!r}; known: {', '.join(sorted(CAPABILITIES))}"
        ) from None


def missing_methods(task_cls, base_classes: tuple[type, ...]) -> dict[str, list[str]]:
    """Methods of declared capabilities that ``task_cls`` does not implement.

    A method counts as implemented when some class in ``task_cls``'s MRO other than the
    abstract ``base_classes`` (whose methods only raise) defines it.  Returns
    {capability: [missing method, ...]} (empty when the declaration is honest).
    """
    out: dict[str, list[str]] = {}
    for cap_name in sorted(getattr(task_cls, "capabilities", ())):
        cap = capability(cap_name)
        missing = []
        for method in cap.methods:
            owners = [k for k in task_cls.__mro__ if method in vars(k)]
            if not owners or all(k in base_classes for k in owners):
                missing.append(method)
        if missing:
            out[cap_name] = missing
    return out


def describe(names) -> str:
    """``name (meaning)`` for each capability (a requirement with alternatives: ``a (...) or
    b (...)``), semicolon-separated, for error messages."""
    return "; ".join(" or ".join(f"{n} ({capability(n).meaning})" for n in alternatives(req))
                     for req in sorted(names))
