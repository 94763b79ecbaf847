"""Declarative rules on a sequence task's labellings, written with label names.

A sequence task's ``rules`` parameter holds them: a list of strings, or one string with one
rule per line or separated by ``;`` (``#`` starts a comment that runs to the end of the
line).  ``LABELS`` is one label, several joined by ``|`` (``author|editor``), or ``*`` for
every label::

    first LABELS                  the first token takes one of LABELS
    last LABELS                   the last token takes one of LABELS
    forbid LABELS -> LABELS       a label on the right never directly follows one on the left
    require LABELS -> LABELS      a token labelled on the left is followed by one labelled on
                                  the right (or is the last token)
    count LABELS <= N             at most N tokens take one of LABELS (also >=, ==)
    at least one LABELS           some token takes one of LABELS (count LABELS >= 1)
    if LABELS then LABELS         if a token takes one of the first LABELS, some token takes
                                  one of the second
    contiguous LABELS             the tokens of each of LABELS form one segment

The first four are *local* (they look at neighbouring labels): they become a
:class:`~latentstruct.inference.constraints.ChainConstraints`, which every chain decoder
keeps exactly (Viterbi, k-best, the CRF's forward-backward).  The last four are *global*:
they become a :class:`~latentstruct.inference.global_constraints.GlobalConstraints`,
decoded exactly by k-best Viterbi and then the HiGHS ILP, which give an argmax (and its
loss-augmented form) but no marginals or k-best lists; a task with global rules offers only
what that decoder does.  Training keeps the local rules, and the global ones only with
``train_global_rules`` (then training labellings must keep them too).  A graph task takes
the global rules but ``contiguous`` (``tasks.graph.task``).

:func:`parse_rules` checks the syntax (a task's parameter check, before any data is read);
:func:`compile_rules` maps the names to a fitted task's label ids (a label the training data
lacks is left out of its rule, with a warning).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from ...exceptions import ConfigError, InputError, warn_user
from ...params import BOOL, Satisfies
from ...inference.constraints import ChainConstraints
from ...inference.global_constraints import (
    Contiguous,
    CountBound,
    GlobalConstraints,
    Implication,
)
from ..contracts import (
    ALLOWED_LABELS,
    KBEST,
    LABEL_FACTORED,
    MARGINALIZABLE,
    PARTIAL_LABELS,
    RANDOM_TIES,
)

__all__ = ["Rule", "parse_rules", "compile_rules", "has_global_rules", "RULES_SYNTAX",
           "LOCAL_KINDS", "GLOBAL_KINDS", "RULES_PARAMETER", "rules_capabilities",
           "first_broken_rule"]

RULES_SYNTAX = ("'first LABELS', 'last LABELS', 'forbid LABELS -> LABELS', "
                "'require LABELS -> LABELS', 'count LABELS <= N' (or >=, ==), "
                "'at least one LABELS', 'if LABELS then LABELS', 'contiguous LABELS'; "
                "LABELS is a label, labels joined by '|', or '*'")
LOCAL_KINDS = ("first", "last", "forbid", "require")
GLOBAL_KINDS = ("count", "if", "contiguous")

_LABELS = r"(\S+)"
_FORMS = [
    ("first", re.compile(rf"first\s+{_LABELS}")),
    ("last", re.compile(rf"last\s+{_LABELS}")),
    ("forbid", re.compile(rf"forbid\s+{_LABELS}\s*->\s*{_LABELS}")),
    ("require", re.compile(rf"require\s+{_LABELS}\s*->\s*{_LABELS}")),
    ("count", re.compile(rf"count\s+{_LABELS}\s*(<=|>=|==)\s*([0-9]+)")),
    ("at least one", re.compile(rf"at\s+least\s+one\s+{_LABELS}")),
    ("if", re.compile(rf"if\s+{_LABELS}\s+then\s+{_LABELS}")),
    ("contiguous", re.compile(rf"contiguous\s+{_LABELS}")),
]
_MAX_RULES = 1000
_MAX_COUNT = 10 ** 6


@dataclass(frozen=True)
class Rule:
    """One parsed rule: its ``kind`` (``first``, ``last``, ``forbid``, ``require``,
    ``count``, ``if`` or ``contiguous``), its label sets (tuples of names; ``("*",)`` for
    every label), for ``count`` its bounds, and the ``text`` it was read from."""

    kind: str
    left: tuple[str, ...]
    right: tuple[str, ...] = ()
    low: int = 0
    high: int | None = None
    text: str = ""

    @property
    def is_global(self) -> bool:
        return self.kind in GLOBAL_KINDS


def _label_set(text: str, rule: str) -> tuple[str, ...]:
    names = tuple(text.split("|"))
    if any(not n for n in names) or ("*" in names and len(names) > 1):
        raise ConfigError(f"rule {rule!r}: {text!r} is not a label set; expected a label, "
                          f"labels joined by '|' (author|editor), or '*' for every label")
    return names


def _parse_one(text: str) -> Rule:
    rule = " ".join(text.split())
    for kind, form in _FORMS:
        m = form.fullmatch(rule)
        if m is None:
            continue
        groups = m.groups()
        if kind == "count":
            n = int(groups[2])
            if n > _MAX_COUNT:
                raise ConfigError(f"rule {rule!r}: a count of at most {_MAX_COUNT:,} tokens "
                                  f"is expected, got {n:,}")
            low, high = {"<=": (0, n), ">=": (n, None), "==": (n, n)}[groups[1]]
            return Rule("count", _label_set(groups[0], rule), low=low, high=high, text=rule)
        if kind == "at least one":
            return Rule("count", _label_set(groups[0], rule), low=1, text=rule)
        right = _label_set(groups[1], rule) if len(groups) > 1 else ()
        return Rule(kind, _label_set(groups[0], rule), right, text=rule)
    raise ConfigError(f"rule {rule!r} is not one of the forms {RULES_SYNTAX}")


def parse_rules(rules) -> tuple[Rule, ...]:
    """The rules of a ``rules`` parameter: None (none), a string (one rule per line or
    separated by ``;``; ``#`` to the end of a line is a comment) or a list or tuple of such
    strings.  Blank entries are skipped.  A
    malformed rule is a ``ConfigError`` quoting it and listing the forms."""
    if rules is None:
        return ()
    if isinstance(rules, str):
        texts = [rules]
    elif isinstance(rules, (list, tuple)) and all(isinstance(r, str) for r in rules):
        texts = list(rules)
    else:
        bad = (next((r for r in rules if not isinstance(r, str)), None)
               if isinstance(rules, (list, tuple)) else None)
        got = (f"a {type(rules).__name__} holding {bad!r} ({type(bad).__name__})"
               if isinstance(rules, (list, tuple)) else type(rules).__name__)
        raise ConfigError(f"rules must be None, a string of rules (separated by ';' or new "
                          f"lines) or a list of such strings; got {got}")
    # a comment runs from "#" to the end of its line
    lines = [line.split("#", 1)[0] for t in texts for line in t.split("\n")]
    parts = [p.strip() for line in lines for p in line.split(";")]
    parts = [p for p in parts if p]
    if len(parts) > _MAX_RULES:
        raise ConfigError(f"rules: {len(parts):,} rules given; at most {_MAX_RULES:,} are "
                          f"supported")
    return tuple(_parse_one(p) for p in parts)


#: the ``rules`` parameter's check (``params``): its syntax, before any data is read
RULES_PARAMETER = {"rules": [None, Satisfies(lambda r: parse_rules(r) is not None,
                                             "a string of rules (';' or new lines between "
                                             "them) or a list of rule strings")],
                   "train_global_rules": [BOOL]}
#: the capabilities of a chain that its prediction with global rules (an ILP argmax) cannot
#: give: k-best lists, allowed labels, the label-factored argmax and random ties
PREDICTION_CAPABILITIES = frozenset({LABEL_FACTORED, KBEST, ALLOWED_LABELS, RANDOM_TIES})
#: and those training with global rules (``train_global_rules``) cannot: the CRF's
#: likelihood and the completion of partial labels
TRAINING_CAPABILITIES = frozenset({MARGINALIZABLE, PARTIAL_LABELS})


def rules_capabilities(capabilities, params: dict | None) -> frozenset:
    """``capabilities`` (a chain task's) less those its ``rules`` and
    ``train_global_rules`` (in ``params``) take away."""
    params = params or {}
    capabilities = frozenset(capabilities)
    if not has_global_rules(params.get("rules")):
        return capabilities
    capabilities -= PREDICTION_CAPABILITIES
    if params.get("train_global_rules") is True:
        capabilities -= TRAINING_CAPABILITIES
    return capabilities


def has_global_rules(rules) -> bool:
    """Whether ``rules`` (a ``rules`` parameter) holds a global rule (count, at least one,
    if-then, contiguous): decoding then needs the ILP.  A malformed value says False (the
    parameter check reports it)."""
    try:
        return any(r.is_global for r in parse_rules(rules))
    except ConfigError:
        return False


def _ids(names: tuple[str, ...], index: dict, rule: Rule, unknown: list) -> list[int]:
    """The ids of the labels ``names`` that ``index`` has; the others are added to
    ``unknown``."""
    if names == ("*",):
        return list(range(len(index)))
    unknown.extend(n for n in names if n not in index and n not in unknown)
    return [index[n] for n in names if n in index]


def _unsatisfiable(rule: Rule, unknown: list, labels) -> InputError:
    return InputError(f"rule {rule.text!r} can never hold: the model has none of the labels "
                      f"it needs ({', '.join(map(repr, unknown))}: not in the training data, "
                      f"whose labels are: {_shown(labels)}); fix the rule, drop it, or train "
                      f"on data with those labels")


def _shown(labels) -> str:
    labels = sorted(labels)
    return ", ".join(labels[:30]) + (", ..." if len(labels) > 30 else "")


def compile_rules(rules, labels, *, warn: bool = True
                  ) -> tuple[ChainConstraints | None, GlobalConstraints | None]:
    """The local rules as ``ChainConstraints`` and the global ones as ``GlobalConstraints``
    over ``labels`` (label names in id order); None for a kind with no rules.

    A label a rule names that is not in ``labels`` (the training data lacked it: a model
    never predicts it) is left out of the rule, with a ``UserWarning`` (``warn``) that
    names it, a typo included: ``first author|editor`` without ``editor`` reads ``first
    author``; ``if volume then journal`` without ``volume`` holds always, without
    ``journal`` it forbids ``volume``.  A rule left unable to hold (``first`` or ``last``
    of labels the model lacks, ``count X >= 1`` of such labels) is an ``InputError``."""
    parsed = parse_rules(rules)
    index = {label: i for i, label in enumerate(labels)}
    L = len(index)
    transitions = np.ones((L, L), bool)
    start = np.ones(L, bool)
    end = np.ones(L, bool)
    local = False
    found = []
    for rule in parsed:
        unknown: list = []
        left = _ids(rule.left, index, rule, unknown)
        right = _ids(rule.right, index, rule, unknown) if rule.right else []
        if unknown and warn:
            warn_user(f"rule {rule.text!r} names label{'s' if len(unknown) > 1 else ''} "
                      f"{', '.join(map(repr, unknown))}, which the training data does not "
                      f"have (so the model never predicts "
                      f"{'them' if len(unknown) > 1 else 'it'}): the rule reads without "
                      f"{'them' if len(unknown) > 1 else 'it'}; the model's labels are: "
                      f"{_shown(index)}", UserWarning)
        if rule.kind in ("first", "last"):
            if not left:
                raise _unsatisfiable(rule, unknown, index)
            allowed = np.isin(np.arange(L), left)
            if rule.kind == "first":
                start &= allowed
            else:
                end &= allowed
        elif rule.kind == "forbid":
            if left and right:
                transitions[np.ix_(left, right)] = False
        elif rule.kind == "require":
            if left:
                others = np.setdiff1d(np.arange(L), right)
                transitions[np.ix_(left, others)] = False
        elif rule.kind == "count":
            if not left:
                if rule.low > 0:
                    raise _unsatisfiable(rule, unknown, index)
                continue
            found.append(CountBound(tuple(left), rule.low, rule.high))
        elif rule.kind == "if":
            if left and right:
                found.append(Implication(tuple(left), tuple(right)))
            elif left:  # nothing can follow from it: the "if" labels never appear
                found.append(CountBound(tuple(left), 0, 0))
        else:
            found.extend(Contiguous(l) for l in left)
        local = local or not rule.is_global
    chain = ChainConstraints(transitions, start, end) if local else None
    return chain, (GlobalConstraints(L, found) if found else None)


def first_broken_rule(rules, labels, targets, *, include_global: bool):
    """The first of ``targets`` (label-id arrays over ``labels``; -1 an unknown tag) that
    breaks a rule of ``rules``, as ``(index, rule, where)``, or None.  Global rules are
    checked only with ``include_global``, and only on targets with no unknown tag (a
    decoder completes those); an unknown tag breaks no local rule."""
    checks = []
    for rule in parse_rules(rules):
        if rule.is_global and not include_global:
            continue
        local, global_ = compile_rules([rule.text], labels, warn=False)
        if local is None and global_ is None:
            continue  # the rule names no label the model has: nothing to break
        checks.append((rule, local, global_))
    if not checks:
        return None
    for i, y in enumerate(targets):
        if y is None:
            continue
        y = np.asarray(y, dtype=np.int64)
        for rule, local, global_ in checks:
            if local is not None:
                bad = local.first_violation(y)
                if bad is not None:
                    t, kind = bad
                    what = {"start": f"{labels[y[t]]!r} first", "end": f"{labels[y[t]]!r} last"}
                    return i, rule, what.get(kind, f"{labels[y[t]]!r} after "
                                                    f"{labels[y[t - 1]]!r}") + f" at token {t}"
            elif global_ is not None and y.size and y.min() >= 0:
                broken = global_.first_violation(y)
                if broken is not None:
                    return i, rule, _broken(broken, y, labels)
    return None


def _broken(constraint, y: np.ndarray, labels) -> str:
    """How labelling ``y`` breaks a global constraint, in label names."""
    def names(ids):
        return "|".join(labels[i] for i in ids)
    if isinstance(constraint, Contiguous):
        return f"{labels[constraint.label]!r} in more than one segment"
    if isinstance(constraint, CountBound):
        n = int(np.isin(y, constraint.labels).sum())
        return f"{n} token{'' if n == 1 else 's'} labelled {names(constraint.labels)}"
    return (f"{names(constraint.if_labels)} without {names(constraint.then_labels)}")
