"""Why a sequence model predicts what it does: :func:`explain_prediction` and
:func:`explain_weights` (``Tagger.explain_prediction(x)``, ``Chunker.explain_weights()``,
``latentstruct explain --model M --input FILE``).

A linear chain model scores a labelling as a sum of weights (``w·Φ(x, y)``): each token's
attributes with its label, each pair of neighbouring labels, the first and the last label.
So the explanation is exact, not an approximation: the contributions of the predicted
labelling add up to its score, and the margin to the runner-up (the second of the exact
n-best list, under the same constraints) says how close the call was and where the two
differ first.  A CRF adds the sequence's probability and each token's label marginals.
Both explanations print as text and, in a notebook, as HTML tables (``_repr_html_``).
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ..exceptions import ConfigError, InputError

__all__ = ["Contribution", "PredictionExplanation", "WeightsExplanation", "explain_prediction",
           "explain_featurised", "explain_records", "explain_weights"]


class Contribution(NamedTuple):
    """One part's share of a labelling's score: ``kind`` is "state" (``feature``: the
    attribute's name), "transition" (``label``: ``(previous, label)``), "start" or "end"
    (``feature`` None); in a graph's explanation "node" (``feature``: the column) or "edge"
    (``position`` and ``label`` pairs: ``(i, j)``, ``(state_i, state_j)``)."""

    position: int
    kind: str
    feature: str | None
    label: object
    value: float


def _label_text(label) -> str:
    return " -> ".join(map(str, label)) if isinstance(label, tuple) else str(label)


@dataclass(frozen=True)
class PredictionExplanation:
    """The predicted labelling of one sequence and why.

    labels : list of str
        The prediction (``predict``'s, under the same constraints and allowed labels).
    score : float
        Its score ``w·Φ(x, y)``; ``sum(c.value for c in contributions)`` equals it.
    contributions : list of Contribution
        ``(position, kind, feature, label, value)`` of every part, tokens in order.
    margin : float
        ``score`` minus the runner-up's score (``inf`` when no other labelling exists;
        ``nan`` under global rules, whose ILP gives the best labelling alone).
    runner_up : list of str or None
        The second best labelling; ``first_difference`` the first token where it differs.
    probability : float or None
        ``p(labels | x)`` for a probabilistic model (CRF), else None; ``marginals`` then
        holds each token's ``{label: p}``.
    tokens : list of str or None
        The tokens' text where the input has it (for display).
    """

    labels: list
    score: float
    contributions: list
    margin: float
    runner_up: list | None
    first_difference: int | None
    probability: float | None
    marginals: list | None
    tokens: list | None

    def token_totals(self) -> np.ndarray:
        """Each token's share of the score (its state parts, its start or end, and the
        transition into it)."""
        totals = np.zeros(len(self.labels))
        for c in self.contributions:
            totals[c.position] += c.value
        return totals

    def _token(self, t: int) -> str:
        return self.tokens[t] if self.tokens is not None else f"token {t}"

    def _summary(self) -> str:
        p = "" if self.probability is None else f", probability {self.probability:.4f}"
        if self.runner_up is None and np.isnan(self.margin):
            return (f"score {self.score:.4f}{p}; no runner-up under the model's global rules "
                    f"(their ILP gives the best labelling alone)")
        if self.runner_up is None:
            return f"score {self.score:.4f}{p}; no other labelling is possible"
        t = self.first_difference
        return (f"score {self.score:.4f}{p}; margin {self.margin:.4f} to the runner-up, which "
                f"first differs at {self._token(t)!r} (position {t}: "
                f"{self.runner_up[t]} instead of {self.labels[t]})")

    def __str__(self, top: int = 5) -> str:
        lines = [self._summary()]
        totals = self.token_totals()
        for t, label in enumerate(self.labels):
            p = "" if self.marginals is None else f"  p={self.marginals[t][label]:.3f}"
            lines.append(f"{t:>4} {self._token(t)!r:<20} {label:<10} {totals[t]:+9.4f}{p}")
            parts = sorted((c for c in self.contributions if c.position == t),
                           key=lambda c: -abs(c.value))
            for c in parts[:top]:
                name = c.feature if c.kind == "state" else c.kind
                lines.append(f"{'':>8}{name!s:<34} {_label_text(c.label):<18} {c.value:+9.4f}")
            if len(parts) > top:
                rest = sum(c.value for c in parts[top:])
                lines.append(f"{'':>8}({len(parts) - top} more){'':<25} {'':<18} {rest:+9.4f}")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        totals = self.token_totals()
        rows = []
        for t, label in enumerate(self.labels):
            parts = sorted((c for c in self.contributions if c.position == t),
                           key=lambda c: -abs(c.value))[:5]
            why = "<br>".join(
                f"{html.escape(str(c.feature if c.kind == 'state' else c.kind))} "
                f"({html.escape(_label_text(c.label))}): {c.value:+.3f}" for c in parts)
            p = "" if self.marginals is None else f"{self.marginals[t][label]:.3f}"
            rows.append(f"<tr><td>{t}</td><td>{html.escape(self._token(t))}</td>"
                        f"<td><b>{html.escape(str(label))}</b></td><td>{p}</td>"
                        f"<td>{totals[t]:+.3f}</td><td style='text-align:left'>{why}</td></tr>")
        return (f"<div><p>{html.escape(self._summary())}</p><table><thead><tr><th>#</th>"
                f"<th>token</th><th>label</th><th>p</th><th>share</th><th>largest parts</th>"
                f"</tr></thead><tbody>{''.join(rows)}</tbody></table></div>")


@dataclass(frozen=True)
class WeightsExplanation:
    """What a sequence model learned: per label its ``top`` largest state weights
    (``positive[label]``, ``negative[label]``: ``(feature, weight)`` best first), and the
    transition, start and end weights (``transitions[prev][label]``; ``-inf`` where the
    model's constraints forbid the part, a chunker's ``O -> I-NP``)."""

    labels: list
    positive: dict
    negative: dict
    transitions: dict
    start: dict
    end: dict

    def __str__(self) -> str:
        lines = []
        for label in self.labels:
            pos = ", ".join(f"{f} {v:+.3f}" for f, v in self.positive[label])
            neg = ", ".join(f"{f} {v:+.3f}" for f, v in self.negative[label])
            lines.append(f"{label}:\n  for:     {pos or '-'}\n  against: {neg or '-'}")
        width = max(8, *(len(str(label)) for label in self.labels)) + 1
        lines.append("transitions (row: previous label, column: label):")
        lines.append(" " * width + "".join(f"{str(b):>{width}}" for b in self.labels))
        for a in self.labels:
            lines.append(f"{str(a):<{width}}" + "".join(
                f"{self.transitions[a][b]:>{width}.3f}" for b in self.labels))
        lines.append("start: " + ", ".join(f"{k} {v:+.3f}" for k, v in self.start.items()))
        lines.append("end:   " + ", ".join(f"{k} {v:+.3f}" for k, v in self.end.items()))
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        esc = lambda v: html.escape(str(v))  # noqa: E731
        rows = "".join(
            f"<tr><td><b>{esc(label)}</b></td><td style='text-align:left'>"
            + "<br>".join(f"{esc(f)} {v:+.3f}" for f, v in self.positive[label])
            + "</td><td style='text-align:left'>"
            + "<br>".join(f"{esc(f)} {v:+.3f}" for f, v in self.negative[label])
            + "</td></tr>" for label in self.labels)
        head = "".join(f"<th>{esc(b)}</th>" for b in self.labels)
        trans = "".join(f"<tr><th>{esc(a)}</th>" + "".join(
            f"<td>{self.transitions[a][b]:.3f}</td>" for b in self.labels) + "</tr>"
            for a in self.labels)
        return (f"<div><table><thead><tr><th>label</th><th>for</th><th>against</th></tr>"
                f"</thead><tbody>{rows}</tbody></table><p>transitions (row: previous "
                f"label)</p><table><thead><tr><th></th>{head}</tr></thead><tbody>{trans}"
                f"</tbody></table></div>")


def _chain(task):
    structure = getattr(task, "structure_", None)
    if not callable(getattr(structure, "contributions", None)):
        raise ConfigError(f"explanations are of sequence models (a labelling's score as a sum "
                          f"of weights); task {task.name!r} is not one")
    return structure


def _token_text(item) -> str | None:
    if isinstance(item, str):
        return item
    if isinstance(item, tuple) and item and isinstance(item[0], str):
        return item[0]  # (word, POS)
    return None


def explain_prediction(task, learner, x, *, allowed=None) -> PredictionExplanation:
    """Explain the prediction of a fitted ``task`` and ``learner`` for one raw sequence
    ``x`` (what the estimator's ``predict`` takes one of); ``allowed``: label ids per token
    (or None), as the learner's ``predict`` takes one entry of them."""
    _chain(task)
    if isinstance(x, (str, bytes)) or not hasattr(x, "__len__"):
        raise InputError(f"explain_prediction explains one sequence (a list of tokens), got "
                         f"a {type(x).__name__}; pass X[i], not X or a string")
    tokens = [_token_text(item) for item in x]
    return explain_featurised(task, learner, task.featurize(task.make_dataset([x])),
                              None if any(t is None for t in tokens) else tokens,
                              allowed=allowed)


def explain_records(task, learner, dataset) -> list[PredictionExplanation]:
    """Explain the prediction of every record of ``dataset`` (``task.read``'s: the command
    line's ``latentstruct explain --input FILE``)."""
    _chain(task)
    Xf = task.featurize(dataset)
    out = []
    for i, record in enumerate(dataset.records):
        # a sentence's words (a citation's tokens): the reader knows where they are
        words = getattr(record, "words", None)
        if words is None:
            words = getattr(record, "tokens", None)
        out.append(explain_featurised(task, learner, Xf.subset([i]),
                                      None if words is None else [str(w) for w in words]))
    return out


def explain_featurised(task, learner, Xf, tokens=None, *, allowed=None) -> PredictionExplanation:
    """The explanation of the one featurised sentence ``Xf`` (a one-sentence corpus);
    ``tokens``: its text for display, or None."""
    structure = _chain(task)
    restriction = None if allowed is None else [allowed]
    one = structure.as_batch(Xf)[0]
    w = learner.structure_weights()
    ilp_only = getattr(structure, "global_constraints", None) is not None
    if ilp_only:
        # global rules: an ILP argmax alone (no k-best list, no probabilities under them)
        y = np.asarray(learner.predict(Xf)[0])
        best = [(y, float(structure.joint_feature(one, y).dot(w)), None)]
    else:
        best = learner.predict_nbest(Xf, 2, allowed=restriction)[0]
    y, score, probability = best[0]
    names = task.featurizer_.get_feature_names_out()
    labels = list(task.labels_)
    parts = [Contribution(t, kind, None if a is None else str(names[a]),
                          tuple(labels[k] for k in label) if isinstance(label, tuple)
                          else labels[label], value)
             for t, kind, a, label, value in structure.contributions(one, w, y)]
    tags = task.decode_targets([y])[0]
    runner_up = first = None
    margin = float("nan") if ilp_only else float("inf")
    if len(best) > 1:
        other = best[1][0]
        runner_up = list(task.decode_targets([other])[0])
        margin = score - best[1][1]
        first = int(np.flatnonzero(np.asarray(other) != np.asarray(y))[0])
    marginals = None
    if probability is not None and hasattr(learner, "predict_marginals"):
        node = learner.predict_marginals(Xf, **({} if allowed is None else
                                                {"allowed": restriction}))[0]
        marginals = [dict(zip(labels, map(float, row))) for row in node]
    return PredictionExplanation(list(tags), float(score), parts, float(margin), runner_up,
                                 first, probability, marginals, tokens)


def explain_weights(task, learner, *, top: int = 10) -> WeightsExplanation:
    """The ``top`` largest positive and negative state weights of every label, and the
    transition, start and end weights, of a fitted sequence ``task`` and ``learner``."""
    if isinstance(top, bool) or not isinstance(top, (int, np.integer)) or top < 1:
        raise ConfigError(f"top must be an integer >= 1, got {top!r}")
    structure = _chain(task)
    w = learner.structure_weights()
    emission = structure.split_weights(w)[0]
    trans, start, end = structure.label_scores(w)  # -inf: forbidden by the constraints
    names = task.featurizer_.get_feature_names_out()
    labels = [str(label) for label in task.labels_]
    positive, negative = {}, {}
    for k, label in enumerate(labels):
        col = emission[:, k]
        up = np.argsort(-col, kind="stable")[:top]
        down = np.argsort(col, kind="stable")[:top]
        positive[label] = [(str(names[a]), float(col[a])) for a in up if col[a] > 0]
        negative[label] = [(str(names[a]), float(col[a])) for a in down if col[a] < 0]
    transitions = {a: {b: float(trans[i, j]) for j, b in enumerate(labels)}
                   for i, a in enumerate(labels)}
    return WeightsExplanation(labels, positive, negative, transitions,
                              dict(zip(labels, map(float, start))),
                              dict(zip(labels, map(float, end))))
